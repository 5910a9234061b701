import type { ApiEvent, EventsApi } from '../api/events.js'
import { accountKey } from '../claims/keys.js'
import { ConfigError } from '../errors/errors.js'
import type { DeliveryOutcome, LedgerContext, LedgerEnvelope, VerifiedDelivery } from './deliver.js'
import { cleanError, type ResourceMark } from './entry.js'
import type { ReplayRunner } from './replay.js'
import { ledgerTimeOf } from './store.js'

// The catch-up sweep: after an outage longer than the service's retries, after a webhook was
// recreated, or on a schedule, each account's events are listed from the API and compared with
// what the ledger last applied to each; every difference becomes a synthetic delivery run
// through the same handlers, the same ledger and the same ordering guard. The plan of one
// event (`catchUpEnvelope`) is pure; `catchUp` lists and feeds.

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
  /** Skip events that ended before this time (ms since the epoch, or a `Date`). Default: none skipped. */
  since?: number | Date
  /** Only these keys. Default: every key with a live subscription (option `subscriptions`). */
  keys?: readonly string[]
  /** Accounts listed at once. Default 4. */
  concurrency?: number
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
  /** Of those, handled now; already handled (a repeat); older than what was applied; failed. */
  ran: number
  duplicates: number
  stale: number
  failed: number
  /** Accounts that could not be listed (not connected, reauthorization, the API failing). */
  problems: { key: string | undefined; error: string }[]
  /** What no catch-up can recover: webhook types the API has no list for. */
  unrecoverable: readonly string[]
}

/** Where catch-up lists from, and how it feeds a delivery through the handler. */
export interface CatchUpSource {
  /** The accounts to list: keys and their clients, or one client under no key. */
  accounts(options: CatchUpOptions): AsyncIterable<{ key: string | undefined; events: EventsApi }>
  /** Runs a synthetic delivery through the ledger and the handlers. */
  feed(
    delivery: VerifiedDelivery,
    context: LedgerContext & { account?: string },
  ): Promise<DeliveryOutcome>
}

/** What catch-up needs of the ledger. */
export interface CatchUpLedger {
  now(): number
  mark(resourceId: string): Promise<ResourceMark | undefined>
}

/** A hash of the text, hex: the synthetic payload id, the same for the same difference. */
async function digest(text: string): Promise<string> {
  const bytes = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(bytes).slice(0, 16)]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('')
}

/**
 * The synthetic delivery of an event whose state the ledger has not applied; `undefined` when
 * it has (or the event has no id). Its payload id is derived from the key, the event, its state
 * and the delivery last applied: the same difference found twice is one delivery (a duplicate).
 */
export async function catchUpEnvelope(
  event: ApiEvent,
  applied: ResourceMark | undefined,
  key: string | undefined,
  now: number,
): Promise<LedgerEnvelope | undefined> {
  if (typeof event.id !== 'string' || event.id === '') return undefined
  if (applied !== undefined && applied.state === event.state) return undefined
  const state = typeof event.state === 'string' ? event.state : ''
  // A state applied before, now confirmed again, is a change; anything else says what it is.
  const type =
    applied !== undefined && state === 'confirmed'
      ? 'event.changed'
      : (TYPE_OF_STATE[state] ?? 'event.changed')
  const id = `payload_catchup_${await digest(JSON.stringify([key ?? '', event.id, state, applied?.by ?? '']))}`
  return { id, type, occurred_at: new Date(now).toISOString(), payload: event }
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
    duplicates: 0,
    stale: 0,
    failed: 0,
    problems: [],
    unrecoverable: UNRECOVERABLE,
  }
  const since = ledgerTimeOf(options.since)
  const concurrency = options.concurrency ?? 4
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new ConfigError('catchUp: concurrency must be a whole number of at least 1.')
  const accounts = source.accounts(options)[Symbol.asyncIterator]()
  const worker = async () => {
    for (let next = await accounts.next(); !next.done; next = await accounts.next()) {
      const { key, events } = next.value
      report.accounts++
      try {
        for await (const event of events.list()) {
          report.listed++
          const end = typeof event.end_at === 'string' ? Date.parse(event.end_at) : Number.NaN
          if (since !== undefined && end < since) continue
          await feedOne(ledger, source, report, event, key)
        }
      } catch (error) {
        report.problems.push({ key, error: cleanError(error) })
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return report
}

async function feedOne(
  ledger: CatchUpLedger,
  source: CatchUpSource,
  report: CatchUpReport,
  event: ApiEvent,
  key: string | undefined,
): Promise<void> {
  const envelope = await catchUpEnvelope(event, await ledger.mark(event.id), key, ledger.now())
  if (envelope === undefined) return
  report.fed++
  const delivery: VerifiedDelivery = {
    envelope,
    key: key === undefined ? envelope.id : accountKey(key, envelope.id),
    account: key,
    text: JSON.stringify(envelope),
    source: 'catch-up',
  }
  try {
    const outcome = await source.feed(delivery, {
      catchUp: true,
      ...(key === undefined ? {} : { account: key }),
    })
    if (outcome === 'ran') report.ran++
    else if (outcome === 'stale') report.stale++
    else if (outcome === 'busy' || outcome === 'done') report.duplicates++
    else report.failed++
  } catch {
    report.failed++
  }
}

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
  ledger: {
    deliver(
      delivery: VerifiedDelivery,
      run: (context: LedgerContext) => unknown,
    ): Promise<DeliveryOutcome>
  },
  runner: ReplayRunner<LedgerEnvelope>,
  subscriptions: CatchUpAccounts | undefined,
  options: CatchUpOptions,
): CatchUpSource {
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
    feed: (delivery, context) =>
      ledger.deliver(delivery, (extra) =>
        runner.dispatch(delivery.envelope, {
          webhookId: undefined,
          account: undefined,
          ...context,
          ...extra,
        }),
      ),
  }
}
