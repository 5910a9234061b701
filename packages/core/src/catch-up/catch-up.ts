import type { ApiEvent, EventsApi } from '../api/events.js'
import { accountKey } from '../claims/keys.js'
import type { LedgerContext, VerifiedDelivery } from '../claims/record.js'
import { ConfigError } from '../errors/errors.js'
import { cleanError, type ResourceMark } from '../ledger/entry.js'
import { resourceKey } from '../ledger/order.js'
import { ledgerTimeOf } from '../ledger/store.js'
import { catchUpEnvelope } from './difference.js'
import type { CatchUpOptions, CatchUpOutcome, CatchUpReport } from './options.js'
import { CatchUpProgress } from './progress.js'
import { type AccountRun, countOutcome, endAccount, newReport } from './report.js'
import {
  endsHere,
  firstWindow,
  nextWindow,
  readWhole,
  type WindowState,
  windowStep,
} from './window.js'

// The catch-up sweep: after an outage longer than the service's retries, after a webhook was
// recreated, or on a schedule, each account's events that the outage can have changed (those
// yet to start, and those that started since `since`: `window.ts`) are listed from
// the API and compared, by
// a digest of the whole Event, with what the ledger last applied to it for that account; every
// difference becomes a synthetic delivery run through the same handlers (here, or in the
// queue's worker), the same ledger and the same ordering guard, which lets it apply only if
// nothing was applied to its Event since the listing began. The plan of one Event
// (`difference.ts`) is pure; `catchUp` lists and feeds.

/** Where catch-up lists from, and how it feeds a delivery through the handler. */
export interface CatchUpSource {
  /** The accounts to list: keys and their clients, or one client under no key. */
  accounts(options: CatchUpOptions): AsyncIterable<{ key: string | undefined; events: EventsApi }>
  /** Runs a synthetic delivery through the ledger and the handlers, or hands it to the queue. */
  feed(
    delivery: VerifiedDelivery,
    context: LedgerContext & { account?: string },
  ): Promise<CatchUpOutcome>
}

/** What catch-up needs of the ledger. */
export interface CatchUpLedger {
  now(): number
  mark(resourceId: string): Promise<ResourceMark | undefined>
  /** Fields left out of a resource's digest (the ledger's `volatileFields`). */
  readonly volatile?: ReadonlySet<string> | undefined
  /**
   * The default of `since`: the retention horizon, before which `purge` drops the marks of
   * Events that ended. An Event that ended before it is not fed for want of a mark.
   */
  horizon?(): number
}

/** Passes over one account while some of its differences were overtaken by live changes. */
const MAX_PASSES = 3

/** Lists every account's events and feeds each difference; a failing account is reported, not thrown. */
export async function catchUp(
  ledger: CatchUpLedger,
  source: CatchUpSource,
  options: CatchUpOptions = {},
): Promise<CatchUpReport> {
  const report = newReport()
  const since = ledgerTimeOf(options.since) ?? ledger.horizon?.()
  const concurrency = options.concurrency ?? 4
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new ConfigError('catchUp: concurrency must be a whole number of at least 1.')
  const cap = options.maxPerAccount ?? MAX_PER_ACCOUNT
  if (!Number.isSafeInteger(cap) || cap < 1)
    throw new ConfigError('catchUp: maxPerAccount must be a whole number of at least 1.')
  const bounds = {
    ...(options.maxPages === undefined ? {} : { maxPages: options.maxPages }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  }
  const progress =
    options.progress === undefined
      ? undefined
      : await CatchUpProgress.open(checkedProgress(options.progress), since, ledger.now())
  const accounts = source.accounts(options)[Symbol.asyncIterator]()
  const budgetMs = budgetOf(options.budgetMs)
  const started = performance.now()
  const worker = async () => {
    let listedHere = 0
    for (let next = await accounts.next(); !next.done; next = await accounts.next()) {
      const { key, events } = next.value
      if (key !== undefined && (await progress?.caughtUp(key))) {
        report.resumed++
        continue
      }
      // Past the budget, once this listing did one: the account taken is left, not recorded
      // (the next call lists it).
      if (listedHere > 0 && performance.now() - started >= budgetMs) {
        report.unfinished = true
        return
      }
      listedHere++
      report.accounts++
      const problems = report.problems.length
      const account: AccountRun = { key, fed: 0, cap, malformed: 0, busy: 0, whole: false }
      try {
        // Listed again while a difference was overtaken by a live change meanwhile: what the
        // API lists now is compared again, so nothing the live change left undone is missed.
        for (let pass = 1; pass <= MAX_PASSES; pass++) {
          const listed = await listOnce(ledger, source, report, events, bounds, account, since)
          if (listed !== 'overtaken') break
        }
      } catch (error) {
        report.problems.push({ key, error: cleanError(error) })
      }
      endAccount(report, account)
      // Caught up when none of the problems told since it began is its own.
      if (key !== undefined && !report.problems.slice(problems).some((p) => p.key === key))
        await progress?.record(key)
    }
  }
  // Every worker ends before the call does: one whose accounts failed to come (the keys' source
  // threw) does not leave the others listing and feeding after the call has rejected.
  const ended = await Promise.allSettled(Array.from({ length: concurrency }, worker))
  const thrown = ended.find((worker) => worker.status === 'rejected')
  if (thrown !== undefined) throw thrown.reason
  await progress?.close(report)
  return report
}

/** `budgetMs` as given: a whole number of ms, 0 or more; none is no bound. */
function budgetOf(budgetMs: unknown): number {
  if (budgetMs === undefined) return Number.POSITIVE_INFINITY
  if (typeof budgetMs !== 'number' || !Number.isSafeInteger(budgetMs) || budgetMs < 0)
    throw new ConfigError('catchUp: budgetMs must be a whole number of ms, 0 or more.')
  return budgetMs
}

function checkedProgress(store: CatchUpOptions['progress']) {
  if (typeof store?.checkpoint !== 'function' || typeof store.setCheckpoint !== 'function')
    throw new ConfigError(
      'catchUp: progress must be a SweepStore (checkpoint, setCheckpoint), the sweep store shared by instances.',
    )
  return store
}

/** Deliveries fed for one account in one run, by default. */
const MAX_PER_ACCOUNT = 1_000

/**
 * One listing of an account (its upcoming Events, then its past ones down to `since`), each
 * difference fed: `overtaken` when one was (list again), `capped` when the account reached its
 * cap (the rest is not read).
 */
async function listOnce(
  ledger: CatchUpLedger,
  source: CatchUpSource,
  report: CatchUpReport,
  events: EventsApi,
  bounds: { maxPages?: number; timeoutMs?: number },
  account: AccountRun,
  since: number | undefined,
): Promise<'overtaken' | 'capped' | 'done'> {
  // Taken before the first page is asked for: whatever the listing shows happened before it.
  const listedAt = ledger.now()
  let overtaken = false
  for (let window: WindowState | undefined = firstWindow; window; window = nextWindow(window)) {
    const period = window.phase === 'upcoming' ? 'upcoming' : 'past'
    const pages =
      events.pages?.({ ...bounds, period }) ?? oneByOne(events.list({ ...bounds, period }))
    for await (const page of pages) {
      for (const event of page) {
        report.listed++
        if (
          typeof event !== 'object' ||
          event === null ||
          typeof event.id !== 'string' ||
          event.id === ''
        ) {
          report.malformed++
          account.malformed++
          continue
        }
        const [next, step] = windowStep(window, event, since, listedAt)
        window = next
        if (step === 'skip') continue
        const outcome = await feedOne(ledger, source, report, event, account, listedAt)
        if (outcome === undefined) continue
        if (outcome === 'stale') overtaken = true
        if (++account.fed >= account.cap) return 'capped'
      }
      if (endsHere(window)) break
    }
    if (readWhole(window)) account.whole = true
  }
  return overtaken ? 'overtaken' : 'done'
}

/** A list read an item at a time, as pages of one (a client of one's own without `pages`). */
async function* oneByOne<T>(items: AsyncIterable<T>): AsyncIterable<T[]> {
  for await (const item of items) yield [item]
}

async function feedOne(
  ledger: CatchUpLedger,
  source: CatchUpSource,
  report: CatchUpReport,
  event: ApiEvent,
  account: AccountRun,
  listedAt: number,
): Promise<CatchUpOutcome | 'failed' | undefined> {
  const { key } = account
  const applied = await ledger.mark(resourceKey(key, event.id))
  const envelope = await catchUpEnvelope(event, applied, key, listedAt, ledger.volatile)
  if (envelope === undefined) return undefined
  report.fed++
  const delivery: VerifiedDelivery = {
    envelope,
    key: key === undefined ? envelope.id : accountKey(key, envelope.id),
    account: key,
    text: JSON.stringify(envelope),
    source: 'catch-up',
    listedAt,
  }
  const outcome = await source
    .feed(delivery, { catchUp: true, ...(key === undefined ? {} : { account: key }) })
    .catch(() => 'failed' as const)
  countOutcome(report, account, outcome)
  return outcome
}
