import { newOwnerId } from '../claims/owner.js'
import { sleep } from '../http/fetch.js'
import {
  type Admission,
  type LeasedLedger,
  type LedgerContext,
  type LedgerEnvelope,
  runLeased,
} from './deliver.js'
import type { LedgerEntry, StoredLedgerEntry } from './entry.js'
import { cleanError } from './entry.js'
import type { LedgerFilter, LedgerPage } from './store.js'

// Replay: recorded deliveries run again in this process, from the body the ledger kept when
// their signature was verified (never re-sent, never verified again with a secret that may
// be gone). One entry by its id, or many by a filter: planned, run at a bounded rate, told.

export interface ReplayOptions {
  /** Why, for the handlers' `context.replay.reason` and the log. Default `'manual'`. */
  reason?: string
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
  /** Entries whose handlers ran and finished. */
  replayed: number
  /** Entries whose handlers threw again (their entry says why; `dead` past the attempts). */
  failed: number
  /** Entries not run: body expired, stale, running elsewhere now, or unknown. */
  skipped: number
  /** The first 100 entries not replayed, with why. */
  problems: { id: string; why: string }[]
}

const MAX_PROBLEMS = 100
const DAY = 86_400_000

/** What a replay needs of the ledger (`DeliveryLedger`). */
export interface ReplayLedger extends LeasedLedger {
  now(): number
  get(id: string): Promise<StoredLedgerEntry | undefined>
  list(filter?: LedgerFilter): Promise<LedgerPage>
  bodyOf(entry: LedgerEntry): Promise<string | undefined>
  admitReplay(id: string, owner: string): Promise<Admission | undefined>
}

type OneOutcome = 'replayed' | 'failed' | { skipped: string }

/** How a replay runs an entry's handlers: the webhook handler's own parse and dispatch. */
export interface ReplayRunner<E extends LedgerEnvelope = LedgerEnvelope> {
  parse(body: string): E
  dispatch(
    envelope: E,
    context: LedgerContext & { webhookId: string | undefined; account: string | undefined },
  ): unknown
}

/** Replays one entry: read, open its body, take it under the ledger's lease, run, record. */
async function replayOne<E extends LedgerEnvelope>(
  ledger: ReplayLedger,
  runner: ReplayRunner<E>,
  id: string,
  reason: string,
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
  const event = runner.parse(text)
  const start = async (): Promise<OneOutcome> => {
    const admission = await ledger.admitReplay(id, newOwnerId())
    if (admission === undefined) return { skipped: 'no such entry' }
    if (admission.action === 'busy') return { skipped: 'it is running now' }
    if (admission.action === 'skip') return { skipped: admission.status }
    const base = { webhookId: entry.webhookId, account: entry.account }
    try {
      await runLeased(
        ledger,
        admission.running,
        (context) => runner.dispatch(event, { ...base, ...context }),
        { replay: { of: id, reason } },
      )
      return 'replayed'
    } catch {
      return 'failed'
    }
  }
  // In turn with the Event's other deliveries in this process, as the service's are.
  if (entry.resourceId !== undefined && ledger.inTurnHere(id))
    return { skipped: 'it is running now' }
  return entry.resourceId === undefined
    ? start()
    : ledger.inTurn(entry.resourceId, id, start, { skipped: 'its Event runs elsewhere now' })
}

/** An entry that could not be taken up (its body does not open, the store failed): why. */
const refused = (error: unknown): OneOutcome => ({ skipped: cleanError(error) })

function count(report: ReplayReport, id: string, outcome: OneOutcome): void {
  if (outcome === 'replayed') report.replayed++
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
  const reason = options.reason ?? 'manual'
  const report: ReplayReport = { planned: 0, replayed: 0, failed: 0, skipped: 0, problems: [] }
  if (typeof target === 'string') {
    report.planned = 1
    if (options.dryRun !== true)
      count(report, target, await replayOne(ledger, runner, target, reason).catch(refused))
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
      count(report, entry.id, await replayOne(ledger, runner, entry.id, reason).catch(refused))
      options.onProgress?.(report)
      const wait = gap - (performance.now() - started)
      if (wait > 0) await sleep(wait)
    }
    cursor = page.next
  } while (cursor !== undefined && report.planned < max)
  return report
}
