import { accountOfKey, keyInScopeOf } from '../claims/keys.js'
import type { LedgerEnvelope, ReplayRequest } from '../claims/record.js'
import { sleep } from '../sleep.js'
import { cleanError } from './entry.js'
import { DONE, type ReplayLedger, replayRecorded } from './rerun.js'
import { type OneOutcome, queueOf, type ReplayRunner } from './runner.js'
import type { LedgerFilter } from './store.js'

// Replay: recorded deliveries run again from the body the ledger kept when their signature was
// verified (never re-sent, never verified again with a secret that may be gone), where the
// handlers are: in this process, or in the queue's worker when the handler has a queue. One
// entry by its id, or many by a filter: planned, run at a bounded rate, told.

export interface ReplayOptions {
  /** Why, for the handlers' `context.replay.reason` and the log. Default `'manual'`. */
  reason?: string
  /**
   * Run entries that are `done` as well (a deliberate re-run, after fixing a handler). By
   * default a replay runs what was not handled (failed, dead, stale): a done entry is skipped,
   * checked under the same claim the service's retry takes, so a replay racing that retry never
   * runs a delivery twice.
   */
  again?: boolean
  /** Entries started per second in a bulk replay. Default 10. */
  perSecond?: number
  /** Most entries one bulk replay runs. Default 1 000. */
  max?: number
  /** Plan only: count what would run, and run nothing. */
  dryRun?: boolean
  /** Told after each entry of a bulk replay. */
  onProgress?: (report: Readonly<ReplayReport>) => void
}

/** What a replay did (counts: a bulk replay holds one page of entries at a time). */
export interface ReplayReport {
  /** Entries the replay took up (all of them with `dryRun`). */
  planned: number
  /** Entries whose handlers ran here and finished. */
  replayed: number
  /**
   * Entries handed to the queue (the handler has the `queue` option): its worker runs them
   * and records how they ended in the ledger. Not yet run: `replayed` does not count them.
   */
  queued: number
  /** Entries whose handlers threw again (their entry says why; `dead` past the attempts). */
  failed: number
  /** Entries not run: body expired, stale, running elsewhere now, or unknown. */
  skipped: number
  /** The first 100 entries not replayed, with why. */
  problems: { id: string; why: string }[]
}

const MAX_PROBLEMS = 100
const DAY = 86_400_000

/** Replays one entry: read, open its body, then run it here or hand it to the queue. */
async function replayOne<E extends LedgerEnvelope>(
  ledger: ReplayLedger,
  runner: ReplayRunner<E>,
  enqueue: ReturnType<typeof queueOf<E>>,
  id: string,
  { reason, again }: { reason: string; again: boolean },
): Promise<OneOutcome> {
  const entry = await ledger.get(id)
  if (entry === undefined) return { skipped: 'no such entry' }
  const text = await ledger.bodyOf(entry)
  if (text === undefined)
    return {
      skipped: entry.bodyCapped
        ? 'its body was not kept: its account kept maxBodiesPerAccount bodies then (catchUp recovers its state)'
        : 'its body is past the retention (the entry stays)',
    }
  // The account it runs as is the one its id (which a sealed body is bound to) was made under:
  // an entry whose unsealed `account` says otherwise was changed in the store.
  if (entry.account !== accountOfKey(entry.id) || entry.id !== id)
    return {
      skipped:
        "its account does not match the key its body was recorded under (the entry was changed in the store): not run as another account's",
    }
  const event = runner.parse(text)
  if (keyInScopeOf(entry, event.id) !== id)
    return { skipped: "its body's payload id is not the one its entry was recorded under" }
  const request: ReplayRequest = { of: id, reason, ...(again ? { again } : {}) }
  const base = { webhookId: entry.webhookId, account: entry.account }
  if (enqueue === undefined)
    return replayRecorded(ledger, entry, request, (context) =>
      runner.dispatch(event, { ...base, ...context }),
    )
  // The worker holds the handlers: it takes the claim, re-checks the entry and runs it.
  if (entry.status === 'received') return { skipped: 'it waits in the queue now' }
  if (entry.status === 'processing' && (entry.leaseUntil ?? 0) > ledger.now())
    return { skipped: 'it is running now' }
  // Not queued to be skipped there: the report would count a job that runs nothing.
  if (entry.status === 'done' && !again) return { skipped: DONE }
  await enqueue(event, { key: id, ...base, replay: request })
  return 'queued'
}

/** An entry that could not be taken up (its body does not open, the store failed): why. */
const refused = (error: unknown): OneOutcome => ({ skipped: cleanError(error) })

function count(report: ReplayReport, id: string, outcome: OneOutcome): void {
  if (outcome === 'replayed') report.replayed++
  else if (outcome === 'queued') report.queued++
  else if (outcome === 'failed') {
    report.failed++
    if (report.problems.length < MAX_PROBLEMS) report.problems.push({ id, why: 'failed again' })
  } else {
    report.skipped++
    if (report.problems.length < MAX_PROBLEMS) report.problems.push({ id, why: outcome.skipped })
  }
}

/**
 * Runs recorded deliveries again: `target` a ledger id, or a filter (by default the `failed`
 * and `dead` entries of the last 24 hours). A bulk replay reads a page at a time and starts
 * at most `perSecond` entries a second, `max` in all.
 */
export async function replayDeliveries<E extends LedgerEnvelope>(
  ledger: ReplayLedger,
  runner: ReplayRunner<E>,
  target: string | LedgerFilter,
  options: ReplayOptions = {},
): Promise<ReplayReport> {
  const ask = { reason: options.reason ?? 'manual', again: options.again === true }
  const enqueue = queueOf(runner, 'replay()')
  const report: ReplayReport = {
    planned: 0,
    replayed: 0,
    queued: 0,
    failed: 0,
    skipped: 0,
    problems: [],
  }
  if (typeof target === 'string') {
    report.planned = 1
    if (options.dryRun !== true)
      count(report, target, await replayOne(ledger, runner, enqueue, target, ask).catch(refused))
    return report
  }
  const max = options.max ?? 1_000
  const gap = 1_000 / (options.perSecond ?? 10)
  const filter: LedgerFilter = {
    status: ['failed', 'dead'],
    since: ledger.now() - DAY,
    ...target,
  }
  let cursor: string | undefined = target.after
  do {
    const page = await ledger.list({
      ...filter,
      limit: Math.min(100, max - report.planned),
      after: cursor,
    })
    for (const entry of page.entries) {
      report.planned++
      if (options.dryRun === true) continue
      const started = performance.now()
      count(
        report,
        entry.id,
        await replayOne(ledger, runner, enqueue, entry.id, ask).catch(refused),
      )
      options.onProgress?.(report)
      const wait = gap - (performance.now() - started)
      if (wait > 0) await sleep(wait)
    }
    cursor = page.next
  } while (cursor !== undefined && report.planned < max)
  return report
}
