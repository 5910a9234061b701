import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import type { PhaseRange } from '@scheduling-kit/core'
import { PHASES } from '@scheduling-kit/core/store'
import { expect, it } from 'vitest'
import { RedisSubscriptionStore } from '../src/index.js'
import { REDIS_URL, redis, uniquePrefix } from './helpers.js'

// The index by sweep phase written by three OS processes at once, creating and deleting records
// of the same 60 keys (lone surrogates among them), each SIGKILLed at random instants and
// replaced, so some die between a record's write and its index's: afterwards every live record
// is in the index (the sweep reads it from there alone: none is skipped), and each key listed
// once. A member whose record is gone (a writer killed between the two) may stay: the sweep
// finds no record there and passes over it.

const writer = new URL('./fixtures/phase-writer.mjs', import.meta.url)
const keys = [
  ...Array.from({ length: 56 }, (_, i) => `acct_${i}`),
  'a\ud800',
  'a\udc00',
  'a:{b}',
  'a'.repeat(300),
]

function spawnWriter(prefix: string): { proc: ChildProcess; ready: Promise<void> } {
  const proc = spawn(process.execPath, [writer.pathname], {
    env: { ...process.env, REDIS_URL, PREFIX: prefix, KEYS: JSON.stringify(keys) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const ready = new Promise<void>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once('line', () => resolve())
    proc.once('exit', () => reject(new Error('a writer ended before it was ready')))
  })
  return { proc, ready }
}

async function listed(store: RedisSubscriptionStore, phases: PhaseRange): Promise<string[]> {
  const seen: string[] = []
  for await (const key of store.keys(phases)) seen.push(key)
  return seen
}

it('3 processes creating and deleting the same keys, SIGKILLed at random instants: every live record indexed, each key listed once', async () => {
  const prefix = uniquePrefix('phase-race')
  const store = new RedisSubscriptionStore({ client: redis(), prefix, logger: false })
  // The index complete before the race (a step's scan marks it so): reads use it alone.
  await listed(store, { from: 0, to: PHASES / 2 })
  const writers = [spawnWriter(prefix), spawnWriter(prefix), spawnWriter(prefix)]
  try {
    await Promise.all(writers.map((w) => w.ready))
    for (let kill = 0; kill < 12; kill++) {
      // A random instant in the next 20 to 120 ms of writing, a random writer.
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 100))
      const i = Math.floor(Math.random() * writers.length)
      writers[i]!.proc.kill('SIGKILL')
      writers[i] = spawnWriter(prefix)
      await writers[i]!.ready
    }
  } finally {
    for (const w of writers) w.proc.kill('SIGKILL')
    await Promise.all(
      writers.map(
        (w) =>
          new Promise((resolve) =>
            w.proc.exitCode !== null ? resolve(undefined) : w.proc.once('exit', resolve),
          ),
      ),
    )
  }
  const live = []
  for (const key of keys) if ((await store.get(key)) !== undefined) live.push(key)
  expect(live.length).toBeGreaterThan(0)
  const all = [
    ...(await listed(store, { from: 0, to: PHASES / 2 })),
    ...(await listed(store, { from: PHASES / 2, to: 0 })),
  ]
  expect(all.length).toBe(new Set(all).size)
  expect(live.filter((key) => !all.includes(key))).toEqual([])
}, 60_000)
