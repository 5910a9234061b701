import type { ApiEvent, EventsApi } from '../api/events.js'
import { accountKey } from '../claims/keys.js'
import type { LedgerContext, VerifiedDelivery } from '../claims/record.js'
import { ConfigError } from '../errors/errors.js'
import type { CatchUpOptions, CatchUpOutcome, CatchUpReport } from './catch-up-options.js'
import {
  endsHere,
  firstWindow,
  nextWindow,
  readWhole,
  type WindowState,
  windowStep,
} from './catch-up-window.js'
import { catchUpEnvelope, UNRECOVERABLE } from './difference.js'
import { cleanError, type ResourceMark } from './entry.js'
import { resourceKey } from './order.js'
import { ledgerTimeOf } from './store.js'

// The catch-up sweep: after an outage longer than the service's retries, after a webhook was
// recreated, or on a schedule, each account's events that the outage can have changed (those
// yet to start, and those that started since `since`: `catch-up-window.ts`) are listed from
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
  const report: CatchUpReport = {
    accounts: 0,
    listed: 0,
    fed: 0,
    ran: 0,
    queued: 0,
    duplicates: 0,
    stale: 0,
    failed: 0,
    malformed: 0,
    capped: 0,
    readWhole: 0,
    problems: [],
    unrecoverable: UNRECOVERABLE,
  }
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
  const accounts = source.accounts(options)[Symbol.asyncIterator]()
  const worker = async () => {
    for (let next = await accounts.next(); !next.done; next = await accounts.next()) {
      const { key, events } = next.value
      report.accounts++
      const account: AccountRun = { key, fed: 0, cap, malformed: 0, whole: false }
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
      if (account.whole) report.readWhole++
      if (account.malformed > 0)
        report.problems.push({
          key,
          error: `${account.malformed} listed items were no Event (not an object, or no string id): skipped`,
        })
      if (account.fed >= cap) {
        report.capped++
        report.problems.push({
          key,
          error: `stopped after ${cap} deliveries (maxPerAccount): the next catch-up goes on from there`,
        })
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return report
}

/** Deliveries fed for one account in one run, by default. */
const MAX_PER_ACCOUNT = 1_000

/** One account's run: what it fed and skipped so far, and its cap. */
interface AccountRun {
  key: string | undefined
  fed: number
  cap: number
  malformed: number
  /** Its listing was read whole: the service ignored `period`, or listed the past oldest first. */
  whole: boolean
}

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
        const outcome = await feedOne(ledger, source, report, event, account.key, listedAt)
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
  key: string | undefined,
  listedAt: number,
): Promise<CatchUpOutcome | 'failed' | undefined> {
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
  try {
    const outcome = await source.feed(delivery, {
      catchUp: true,
      ...(key === undefined ? {} : { account: key }),
    })
    if (outcome === 'ran') report.ran++
    else if (outcome === 'queued') report.queued++
    else if (outcome === 'stale') report.stale++
    else if (outcome === 'busy' || outcome === 'done') report.duplicates++
    else report.failed++
    return outcome
  } catch {
    report.failed++
    return 'failed'
  }
}
