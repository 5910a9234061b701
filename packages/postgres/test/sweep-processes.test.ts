import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { createWebhookSubscriptions } from '@scheduling-kit/core'
import { startFakeSchedulingService } from '@scheduling-kit/testing'
import { expect, it } from 'vitest'
import { PostgresSubscriptionStore, PostgresSweepStore } from '../src/index.js'
import { DATABASE_URL, migratedSchema, pool } from './helpers.js'

// Three OS processes share one sweep through PostgreSQL over real HTTP against the fake service,
// and one is SIGKILLed in the middle of a step: over one period every account is listed (none
// skipped), and the lists beyond one an account are at most the killed step's window, 2% of them.

const ACCOUNTS = 3_000
const PERIOD_MS = 12_000
const child = new URL('./fixtures/sweep-child.mjs', import.meta.url)

it('3 processes, one SIGKILLed mid-step: each account listed within the period, at most 2% twice', async () => {
  const db = pool(8)
  const schema = await migratedSchema('sweep_race', db)
  const service = await startFakeSchedulingService({ retrySchedule: [] })
  const hookUrl = 'https://app.example.test/webhooks/scheduling'
  const keys = Array.from({ length: ACCOUNTS }, (_, i) => `acct_${i}`)
  const setup = createWebhookSubscriptions({
    url: hookUrl,
    apiUrl: service.apiUrl,
    tokens: { getAccessToken: async (key) => `pat_${key}` },
    store: new PostgresSubscriptionStore({ pool: db, schema }),
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  })
  for (const key of keys) service.auth.addPersonalAccessToken(`pat_${key}`, key)
  for (let i = 0; i < keys.length; i += 50)
    await Promise.all(keys.slice(i, i + 50).map((key) => setup.ensure(key)))
  // Every shard starts now; the processes' clocks stop a period later.
  const sweeps = new PostgresSweepStore({ pool: db, schema })
  const start = Date.now()
  for (let shard = 0; shard < 16; shard++)
    expect(await sweeps.setCheckpoint(`sweep:${shard}`, start, undefined)).toBe(1)
  const listedBefore = service.api.listed
  const before = new Map(service.listsByAccount)
  const end = start + PERIOD_MS
  const checked = new Map<string, number>()
  const spawnOne = () => {
    const proc = spawn(process.execPath, [child.pathname], {
      env: {
        ...process.env,
        DATABASE_URL,
        SCHEMA: schema,
        API_URL: service.apiUrl,
        HOOK_URL: hookUrl,
        PERIOD_MS: String(PERIOD_MS),
        LEASE_MS: '1500',
        STEP_MS: '60',
        SLOW_MS: '5',
        END: String(end),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const lines: Array<{ checking?: string; step?: unknown }> = []
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      const parsed = JSON.parse(line) as { checking?: string; step?: unknown }
      lines.push(parsed)
      if (parsed.checking !== undefined)
        checked.set(parsed.checking, (checked.get(parsed.checking) ?? 0) + 1)
    })
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)))
    return { proc, lines, exited }
  }
  const procs = [spawnOne(), spawnOne(), spawnOne()]
  try {
    // A process is killed in the middle of a step: after it started on its tenth account of
    // that step (no step line between: some of its lists done, some not), while it holds its
    // shards; a step that never gets so far is caught at its third, past half the period.
    const victim = await midStep(procs, () => (Date.now() < start + PERIOD_MS / 2 ? 10 : 3))
    victim.proc.kill('SIGKILL')
    await victim.exited
    const codes = await Promise.all(procs.filter((p) => p !== victim).map((p) => p.exited))
    expect(codes).toEqual([0, 0])
    const lists = service.api.listed - listedBefore
    const listsOf = (k: string) => (service.listsByAccount.get(k) ?? 0) - (before.get(k) ?? 0)
    const twice = keys.filter((k) => listsOf(k) > 1)
    const startedTwice = [...checked.values()].filter((n) => n > 1).length
    if (process.env.SWEEP_RACE_FIGURES)
      console.log(JSON.stringify({ lists, twice: twice.length, startedTwice }))
    // None skipped: the service answered every account's list at least once in the period.
    expect(keys.filter((k) => listsOf(k) === 0)).toEqual([])
    expect(keys.filter((k) => !checked.has(k))).toEqual([])
    // Listed twice: only what the killed step had under way, at most 2%.
    expect(twice.length).toBeLessThanOrEqual(ACCOUNTS * 0.02)
    expect(lists - ACCOUNTS).toBe(twice.reduce((n, k) => n + listsOf(k) - 1, 0))
  } finally {
    for (const p of procs) p.proc.kill('SIGKILL')
    await service.close()
  }
}, 180_000)

type Proc = {
  proc: ChildProcess
  lines: Array<{ checking?: string; step?: unknown }>
  exited: Promise<number | null>
}

/** The first process seen starting on its `n()`th account since its last step ended. */
async function midStep(procs: Proc[], n: () => number): Promise<Proc> {
  for (;;) {
    for (const p of procs) {
      let since = 0
      for (let i = p.lines.length - 1; i >= 0 && p.lines[i]!.step === undefined; i--) since++
      if (since >= n()) return p
    }
    await new Promise((resolve) => setImmediate(resolve))
  }
}
