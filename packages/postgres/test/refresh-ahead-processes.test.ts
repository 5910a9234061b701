import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { startFakeSchedulingService } from '@scheduling-kit/testing'
import { expect, it } from 'vitest'
import { PostgresSweepStore, PostgresTokenStore } from '../src/index.js'
import { DATABASE_URL, migratedSchema, pool } from './helpers.js'

// Refresh ahead shared by two OS processes through PostgreSQL, against the fake service's token
// endpoint (rotating refresh tokens, with the reuse grace period real servers give), one
// SIGKILLed in the middle of a step (two refreshes stored, its checkpoint not moved): over one
// period every connection is refreshed and stored exactly once (its record's version moves by
// one) or, when its refresh failed (a token request past its time-out on a busy machine: a
// loaded CI run found one), is held in the sweep store for its next try, none is lost (each stored refresh token still valid), the token calls beyond one a
// connection are at most what the killed process had under way, and the next holder of the
// killed step's shard leaves what that step had stored.

const ACCOUNTS = 300
const PERIOD_MS = 10_000
const child = new URL('./fixtures/refresh-ahead-child.mjs', import.meta.url)

it('2 processes, one SIGKILLed mid-step: each connection refreshed and stored once in the period, none lost', async () => {
  const db = pool(8)
  const schema = await migratedSchema('refresh_ahead', db)
  const service = await startFakeSchedulingService({ reuseGraceMs: 60_000 })
  const tokens = new PostgresTokenStore({ pool: db, schema })
  const keys = Array.from({ length: ACCOUNTS }, (_, i) => `acct_${i}`)
  const connectedAt = Date.now() - 600_000
  for (let i = 0; i < keys.length; i += 50)
    await Promise.all(
      keys.slice(i, i + 50).map(async (key) => {
        const granted = service.auth.grant(key)
        await tokens.set(key, {
          accessToken: granted.access_token,
          refreshToken: granted.refresh_token,
          tokenType: 'bearer',
          expiresAt: connectedAt + 7_200_000,
          obtainedAt: connectedAt,
          account: { id: key },
        })
      }),
    )
  // Every shard starts now; the processes' clocks stop a period later.
  const sweeps = new PostgresSweepStore({ pool: db, schema })
  const start = Date.now()
  for (let shard = 0; shard < 16; shard++)
    expect(await sweeps.setCheckpoint(`refresh:${shard}`, start, undefined)).toBe(1)
  const refreshesBefore = service.auth.counters.refresh
  let kill: (p: ChildProcess) => void = () => {}
  const victim = new Promise<ChildProcess>((resolve) => {
    kill = resolve
  })
  let inFlightAtKill = 0 // as the test saw it: told, not asserted (a start may be unseen yet)
  let killed = false
  let fresh = 0
  // Refreshes that failed (a token request past its 1 s time-out on a busy machine): each is
  // held for its next try, which a clock stopped at the period's end never reaches.
  const failedAtSomeStep = new Set<string>()
  const spawnOne = () => {
    const proc = spawn(process.execPath, [child.pathname], {
      env: {
        ...process.env,
        DATABASE_URL,
        SCHEMA: schema,
        AUTH_URL: service.authUrl,
        CLIENT_ID: service.clientId,
        CLIENT_SECRET: service.clientSecret,
        ACCOUNTS: String(ACCOUNTS),
        PERIOD_MS: String(PERIOD_MS),
        LEASE_MS: '1500',
        STEP_MS: '50',
        SLOW_MS: '60',
        END: String(start + PERIOD_MS),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const open = new Set<string>()
    let doneInStep = 0
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      const parsed = JSON.parse(line) as {
        refreshing?: string
        refreshed?: string
        step?: { fresh: number; failed: string[] }
      }
      if (parsed.step !== undefined) {
        doneInStep = 0
        fresh += parsed.step.fresh
        for (const key of parsed.step.failed) failedAtSomeStep.add(key)
      }
      if (parsed.refreshing !== undefined) open.add(parsed.refreshing)
      if (parsed.refreshed === undefined) return
      open.delete(parsed.refreshed)
      // Killed in the middle of a step, past its first 100 ms: once two of the step's
      // refreshes are stored (and paused after: the step's checkpoint not moved), the next
      // maybe under way.
      if (++doneInStep === 2 && Date.now() > start + 100 && !killed) {
        killed = true
        inFlightAtKill = open.size
        kill(proc)
      }
    })
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)))
    return { proc, exited }
  }
  const procs = [spawnOne(), spawnOne()]
  try {
    const ended = Promise.all(procs.map((p) => p.exited)).then(() => undefined)
    const doomed = await Promise.race([victim, ended])
    if (doomed === undefined) throw new Error('both processes ended before one was mid-refresh')
    doomed.kill('SIGKILL')
    const survivor = procs.find((p) => p.proc !== doomed)!
    expect(await survivor.exited).toBe(0)
    // Each connection refreshed and stored once: its record's version moved by one. One whose
    // refresh failed is not lost either: it failed at a step and waits for its next try in the
    // sweep store (a few at most: the refreshes under way at once).
    const versions = await Promise.all(keys.map(async (k) => (await tokens.get(k))?.version))
    expect(versions.filter((v) => v !== 1 && v !== 2)).toEqual([])
    const unrefreshed = keys.filter((_, i) => versions[i] === 1)
    expect(unrefreshed.filter((k) => !failedAtSomeStep.has(k))).toEqual([])
    const held = await Promise.all(unrefreshed.map((k) => sweeps.heldRetry('refresh', k)))
    expect(unrefreshed.filter((_, i) => held[i] === undefined)).toEqual([])
    expect(unrefreshed.length).toBeLessThanOrEqual(4)
    // None lost: each stored refresh token is one the service still takes.
    const lost = []
    for (const k of keys) {
      const record = await tokens.get(k)
      if (!service.auth.isRefreshTokenValid(record!.refreshToken!)) lost.push(k)
    }
    expect(lost).toEqual([])
    // Token calls beyond one a connection: only the refreshes under way when it was killed.
    const calls = service.auth.counters.refresh - refreshesBefore
    expect(calls - ACCOUNTS).toBeLessThanOrEqual(4) // its concurrency
    // The killed step's shard was done again: what it had stored there was left as it was.
    expect(fresh).toBeGreaterThanOrEqual(1)
    // No spent refresh token refused (one the killed process spent is taken within the grace).
    expect(service.auth.counters.reuse).toBe(0)
    if (process.env.SWEEP_RACE_FIGURES)
      console.log(
        JSON.stringify({
          calls,
          inFlightAtKill,
          fresh,
          grace: service.auth.counters.graceReuse,
          unrefreshed,
        }),
      )
  } finally {
    for (const p of procs) p.proc.kill('SIGKILL')
    await service.close()
  }
}, 180_000)
