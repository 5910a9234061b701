import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { startFakeSchedulingService } from '@scheduling-kit/testing'
import { expect, it } from 'vitest'
import { PostgresSweepStore } from '../src/index.js'
import { DATABASE_URL, migratedSchema, pool } from './helpers.js'

// A catch-up over 300 accounts, each with a change whose delivery was lost, SIGKILLed partway
// through: the next run with the same `since` lists only the accounts the killed one had not
// caught up, each change is applied once over both runs, and a run after that (closed, every
// account caught up) lists every account afresh, finding nothing.

const child = new URL('./fixtures/catch-up-child.mjs', import.meta.url)
const ACCOUNTS = 300

it('300 accounts, a run SIGKILLed partway: the next lists only what it left (and a change the killed one held, once its lease lapsed), each change applied once; the run after starts afresh', async () => {
  const db = pool(4)
  const schema = await migratedSchema('catch_up_resume', db)
  const service = await startFakeSchedulingService({ retrySchedule: [] })
  const keys = Array.from({ length: ACCOUNTS }, (_, i) => `acct_${i}`)
  const now = Date.now()
  for (const key of keys) {
    service.auth.addPersonalAccessToken(`pat_${key}`, key)
    await service.trigger('event.created', {
      account: key,
      lost: true,
      payload: {
        id: `event_${key}`,
        start_at: new Date(now + 86_400_000).toISOString(),
        end_at: new Date(now + 88_200_000).toISOString(),
      },
    })
  }
  const env = {
    ...process.env,
    DATABASE_URL,
    SCHEMA: schema,
    API_URL: service.apiUrl,
    KEYS: JSON.stringify(keys),
    SINCE: String(now - 86_400_000),
  }
  /**
   * One run: its lists and applied Events, its report; killed on its `killAt`th list; its
   * ledger's clock `clockAheadMs` ahead.
   */
  const run = (killAt = Number.POSITIVE_INFINITY, clockAheadMs = 0) =>
    new Promise<{ lists: string[]; applied: string[]; report?: Record<string, unknown> }>(
      (resolve) => {
        const proc = spawn(process.execPath, [child.pathname], {
          env: { ...env, CLOCK_AHEAD_MS: String(clockAheadMs) },
          stdio: ['ignore', 'pipe', 'inherit'],
        })
        const seen = { lists: [] as string[], applied: [] as string[] } as {
          lists: string[]
          applied: string[]
          report?: Record<string, unknown>
        }
        createInterface({ input: proc.stdout! }).on('line', (line) => {
          const told = JSON.parse(line)
          if (told.list !== undefined && seen.lists.push(told.list) === killAt) proc.kill('SIGKILL')
          if (told.applied !== undefined) seen.applied.push(told.applied)
          if (told.report !== undefined) seen.report = told.report
        })
        // Every line read first: 'close' comes after the output's end, 'exit' may come before.
        proc.on('close', () => resolve(seen))
      },
    )
  try {
    const first = await run(120)
    expect(first.report, 'the first run was killed before its end').toBeUndefined()
    const sweeps = new PostgresSweepStore({ pool: db, schema })
    const recorded = new Set<string>()
    for (const key of keys)
      if ((await sweeps.checkpoint(`catch-up:account:${key}`)) !== undefined) recorded.add(key)
    expect(recorded.size).toBeGreaterThan(0)

    const second = await run()
    // A change the killed run had begun (its entry held under the dead process's lease) is
    // busy here: its account is a problem, so the run stays open.
    const busy = (second.report!.problems as { key: string }[]).map((p) => p.key)
    expect(second.report).toMatchObject({
      resumed: recorded.size,
      accounts: ACCOUNTS - recorded.size,
      busy: busy.length,
    })
    const listed = new Set(second.lists)
    expect(
      [...listed].filter((k) => recorded.has(k)),
      'caught up, listed again',
    ).toEqual([])
    expect(
      keys.filter((k) => !recorded.has(k) && !listed.has(k)),
      'left, not listed',
    ).toEqual([])
    const applied = [...first.applied, ...second.applied]
    // The clock of the runs from here on: past the killed run's leases.
    let ahead = 0
    if (busy.length > 0) {
      // Taken up again once the dead process's lease lapsed: the busy accounts alone.
      ahead = await pastTheLeases(db, schema, busy)
      const again = await run(undefined, ahead)
      expect(again.report).toMatchObject({
        resumed: ACCOUNTS - busy.length,
        accounts: busy.length,
        busy: 0,
        problems: [],
      })
      applied.push(...again.applied)
    }
    // Each change applied, once: twice only where the killed run's handler had run and it
    // died before recording so (the crash window of a handler; the ledger runs it again).
    const all = keys.map((k) => `${k}|event_${k}`)
    expect(
      all.filter((e) => !applied.includes(e)),
      'never applied',
    ).toEqual([])
    const twice = all.filter((e) => applied.filter((a) => a === e).length > 1)
    const inTheWindow = (e: string) => first.applied.includes(e) && busy.includes(e.split('|')[0]!)
    expect(
      twice.filter((e) => !inTheWindow(e)),
      'applied twice',
    ).toEqual([])
    expect(twice.length).toBeLessThanOrEqual(4)
    if (process.env.CATCH_UP_FIGURES)
      console.log(
        JSON.stringify({ recorded: recorded.size, busy: busy.length, twice: twice.length }),
      )

    const third = await run(undefined, ahead)
    expect(third.report).toMatchObject({ resumed: 0, accounts: ACCOUNTS, fed: 0, problems: [] })
    expect(new Set(third.lists)).toEqual(new Set(keys))
  } finally {
    await service.close()
  }
}, 180_000)

/**
 * How far ahead the next run's clock must be for the leases the killed run left to have
 * lapsed: on these accounts' entries (`leaseUntil`) and on the resources it held (the holds
 * table; the runs that ended released theirs). The clock is driven, no lease waited out.
 */
async function pastTheLeases(db: ReturnType<typeof pool>, schema: string, accounts: string[]) {
  const { rows } = await db.query<{ until: string | null }>(
    `SELECT greatest(
       (SELECT max((entry::jsonb ->> 'leaseUntil')::bigint)
        FROM ${schema}.scheduling_kit_ledger WHERE account = ANY($1)),
       (SELECT max(until) FROM ${schema}."scheduling_kit_ledger$holds")) AS until`,
    [accounts],
  )
  return Math.max(0, Number(rows[0]?.until ?? 0) - Date.now() + 1)
}
