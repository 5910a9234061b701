import type { ApiEvent, EventsApi } from '../api/events.js'
import { accountKey } from '../claims/keys.js'
import type {
  DeliveryOutcome,
  DeliveryRecord,
  LedgerContext,
  LedgerEnvelope,
  VerifiedDelivery,
} from '../claims/record.js'
import { ConfigError } from '../errors/errors.js'
import { shapeOf } from './digest.js'
import { cleanError, type ResourceMark } from './entry.js'
import { resourceKey } from './order.js'
import { queueOf, type ReplayRunner } from './replay.js'
import { ledgerTimeOf } from './store.js'

// The catch-up sweep: after an outage longer than the service's retries, after a webhook was
// recreated, or on a schedule, each account's events are listed from the API and compared, by
// a digest of the whole Event, with what the ledger last applied to it for that account; every
// difference becomes a synthetic delivery run through the same handlers (here, or in the
// queue's worker), the same ledger and the same ordering guard, which lets it apply only if
// nothing was applied to its Event since the listing began. The plan of one Event
// (`catchUpEnvelope`) is pure; `catchUp` lists and feeds.

/** The webhook types no list endpoint can recover: their changes are lost with their deliveries. */
export const UNRECOVERABLE = ['poll.*', 'workflow.*'] as const

/** What an Event's state is told as, when the ledger has not applied it. */
const TYPE_OF_STATE: Readonly<Record<string, string>> = {
  confirmed: 'event.created',
  awaiting_approval: 'event.requested',
  declined: 'event.declined',
  canceled: 'event.canceled',
  awaiting_checkout: 'event.checkout.pending',
  checkout_expired: 'event.checkout.expired',
}

export interface CatchUpOptions {
  /**
   * Skip events that ended before this time (ms since the epoch, or a `Date`). Default: the
   * ledger's `retention.entryMs` ago (the marks of Events that ended before it are purged).
   */
  since?: number | Date
  /** Only these keys. Default: every key with a live subscription (option `subscriptions`). */
  keys?: readonly string[]
  /** Accounts listed at once. Default 4. */
  concurrency?: number
  /**
   * The most deliveries fed for one account in one run (default 1,000): past it, the account
   * stops there with a problem saying so, and the next run goes on from what is applied then.
   * A hostile or mis-pointed API cannot make one run feed without end.
   */
  maxPerAccount?: number
  /** The most pages of one account's listing (default 1,000), and how long it is followed (default 120,000 ms): past either, the account is reported. */
  maxPages?: number
  timeoutMs?: number
  /**
   * Without subscriptions: the client of the one account the app receives for (a personal
   * access token's), its events under no key.
   */
  client?: { events: EventsApi }
}

/** What a catch-up did. */
export interface CatchUpReport {
  /** Accounts listed. */
  accounts: number
  /** Events the API listed. */
  listed: number
  /** Events whose state the ledger had not applied: fed through the handlers. */
  fed: number
  /**
   * Of those: handled here now; handed to the queue (its worker runs them: not yet run);
   * already handled (a repeat); overtaken by a change applied since the listing (listed again,
   * up to three passes an account); failed.
   */
  ran: number
  queued: number
  duplicates: number
  stale: number
  failed: number
  /**
   * Items of a listing that are no Event (not an object, no string `id`): skipped, counted,
   * and the account's first one told in `problems`.
   */
  malformed: number
  /** Accounts that stopped at `maxPerAccount` deliveries (in `problems` too). */
  capped: number
  /**
   * Accounts that could not be listed, or were listed only in part (not connected,
   * reauthorization, the API failing, a list past its bounds, malformed items, the cap).
   */
  problems: { key: string | undefined; error: string }[]
  /** What no catch-up can recover: webhook types the API has no list for. */
  unrecoverable: readonly string[]
}

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

/** A hash of the text, hex: the synthetic payload id, the same for the same difference. */
async function digest(text: string): Promise<string> {
  const bytes = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(bytes).slice(0, 16)]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('')
}

/**
 * The type a difference is told as: a state not applied says what it is (`event.canceled`,
 * `event.declined`, ...; a first sight of a confirmed Event is `event.created`); with the state
 * unchanged, new times are `event.rescheduled`; anything else (attendees and their responses,
 * a description, fields unknown today) is `event.changed`. Every one carries the whole Event
 * as listed now.
 */
export function differenceType(
  listed: { state: string; when?: string },
  applied: ResourceMark | undefined,
): string {
  if (applied === undefined) return TYPE_OF_STATE[listed.state] ?? 'event.changed'
  if (applied.state !== listed.state)
    return listed.state === 'confirmed'
      ? 'event.changed'
      : (TYPE_OF_STATE[listed.state] ?? 'event.changed')
  return applied.when !== undefined && listed.when !== applied.when
    ? 'event.rescheduled'
    : 'event.changed'
}

/**
 * The synthetic delivery of a listed Event that differs from what the ledger last applied to
 * it (its digest: the whole resource, not its state alone); `undefined` when it does not (or
 * the Event has no id). Stamped with its listing's time. Its payload id is
 * derived from the key, the Event, its digest and the delivery last applied: the same
 * difference found twice is one delivery (a duplicate).
 */
export async function catchUpEnvelope(
  event: ApiEvent,
  applied: ResourceMark | undefined,
  key: string | undefined,
  listedAt: number,
  volatile?: ReadonlySet<string>,
): Promise<LedgerEnvelope | undefined> {
  if (typeof event.id !== 'string' || event.id === '') return undefined
  const shape = shapeOf(event as Record<string, unknown>, volatile)
  if (applied?.digest === shape.digest) return undefined
  const state = typeof event.state === 'string' ? event.state : ''
  const type = differenceType(
    { state, ...(shape.when === undefined ? {} : { when: shape.when }) },
    applied,
  )
  const id = `payload_catchup_${await digest(JSON.stringify([key ?? '', event.id, shape.digest, applied?.by ?? '']))}`
  return {
    id,
    type,
    occurred_at: new Date(listedAt).toISOString(),
    payload: event,
  }
}

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
      const account: AccountRun = { key, fed: 0, cap, malformed: 0 }
      try {
        // Listed again while a difference was overtaken by a live change meanwhile: what the
        // API lists now is compared again, so nothing the live change left undone is missed.
        for (let pass = 1; pass <= MAX_PASSES; pass++) {
          const listed = await listOnce(ledger, source, report, events.list(bounds), account, since)
          if (listed !== 'overtaken') break
        }
      } catch (error) {
        report.problems.push({ key, error: cleanError(error) })
      }
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
}

/**
 * One listing of an account, each difference fed: `overtaken` when one was (list again),
 * `capped` when the account reached its cap (the rest is not read).
 */
async function listOnce(
  ledger: CatchUpLedger,
  source: CatchUpSource,
  report: CatchUpReport,
  listing: AsyncIterable<ApiEvent>,
  account: AccountRun,
  since: number | undefined,
): Promise<'overtaken' | 'capped' | 'done'> {
  // Taken before the first page is asked for: whatever the listing shows happened before it.
  const listedAt = ledger.now()
  let overtaken = false
  for await (const event of listing) {
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
    const end = typeof event.end_at === 'string' ? Date.parse(event.end_at) : Number.NaN
    if (since !== undefined && end < since) continue
    const outcome = await feedOne(ledger, source, report, event, account.key, listedAt)
    if (outcome === undefined) continue
    if (outcome === 'stale') overtaken = true
    if (++account.fed >= account.cap) return 'capped'
  }
  return overtaken ? 'overtaken' : 'done'
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

/** What came of one catch-up delivery: the ledger's outcome, or handed to the queue. */
export type CatchUpOutcome = DeliveryOutcome | 'queued'

/** What catch-up needs of the subscriptions: the accounts' keys and clients. */
export interface CatchUpAccounts {
  client?(key: string): { events: EventsApi }
  keys?(): AsyncIterable<string>
}

/**
 * The webhook handler's source: each account's events listed with its client from the
 * subscriptions (or `options.client` for one account), each difference fed through the ledger
 * and the handler's registry (`runner`).
 */
export function handlerSource(
  /** The delivery's record: the ledger. */
  ledger: DeliveryRecord,
  runner: ReplayRunner<LedgerEnvelope>,
  subscriptions: CatchUpAccounts | undefined,
  options: CatchUpOptions,
): CatchUpSource {
  const enqueue = queueOf(runner, 'catchUp()')
  if (options.client === undefined && typeof subscriptions?.client !== 'function')
    throw new ConfigError(
      "catchUp() lists events with each account's client: give the handler subscriptions, or catchUp({ client }) for one account.",
    )
  return {
    async *accounts({ keys, client }) {
      if (client !== undefined) {
        yield { key: undefined, events: client.events }
        return
      }
      for await (const key of keys ?? subscriptions!.keys!())
        yield { key, events: subscriptions!.client!(key).events }
    },
    feed: async (delivery, context) => {
      if (enqueue !== undefined) {
        // The worker holds the handlers: recorded `received`, then a job of its own; the
        // worker runs it under the Event's order. The same difference found while its job
        // waits is one delivery (its job id is its key).
        const handed = await ledger.handOff(delivery, () =>
          enqueue(delivery.envelope, {
            key: delivery.key,
            webhookId: undefined,
            account: delivery.account,
            catchUp: { listedAt: delivery.listedAt ?? 0 },
          }),
        )
        return handed === 'ran' ? 'queued' : 'done'
      }
      return ledger.deliver(delivery, (extra) =>
        runner.dispatch(delivery.envelope, {
          webhookId: undefined,
          account: undefined,
          ...context,
          ...extra,
        }),
      )
    },
  }
}
