import { serverText } from '../errors/errors.js'

// A delivery's entry in the ledger: what arrived, whose it is, how far its handlers got. The
// shape every ledger store keeps; `machine.ts` says how an entry moves on.

/**
 * Where a delivery is:
 * - `received`: verified and recorded, handed to a queue (its worker records the outcome);
 * - `processing`: its handlers run now, under a lease (`leaseUntil`): a process that died
 *   leaves it claimable again once the lease lapses, never stuck;
 * - `done`: its handlers finished;
 * - `failed`: its handlers threw; the service's retry (or a replay) runs them again;
 * - `dead`: they failed `maxAttempts` times: nothing runs it again but a replay;
 * - `stale`: older than what was last applied to its resource, so not run (option `stale`).
 */
export type DeliveryStatus = 'received' | 'processing' | 'done' | 'failed' | 'dead' | 'stale'

/** How the delivery reached the ledger. */
export type DeliverySource = 'webhook' | 'replay' | 'catch-up'

/** One verified delivery, as the ledger keeps it. */
export interface LedgerEntry {
  /** The ledger id: the delivery's dedupe key (the payload id, under its account when one). */
  id: string
  /** The envelope's `id` (`payload_...`). */
  payloadId: string
  /** The envelope's `type`. */
  type: string
  /** The webhook it was delivered to, when the request named one. */
  webhookId?: string
  /** The connected account's key (option `subscriptions`). */
  account?: string
  /** The resource it changes (an Event's id), when the payload names one. */
  resourceId?: string
  /** The resource's state the delivery carries (`payload.state`), when it names one. */
  resourceState?: string
  /**
   * A digest of the whole resource the payload carries (every field, unknown ones included),
   * kept in its mark once applied: what `catchUp` compares the API's listing with.
   */
  resourceDigest?: string
  /** The resource's `start_at`/`end_at` as sent: a difference there is told as a reschedule. */
  resourceWhen?: string
  /** The envelope's `occurred_at`, as sent. */
  occurredAt?: string
  /**
   * A catch-up delivery's listing time (ms since the epoch, this ledger's clock): it runs only
   * if nothing was applied to its Event since the listing began.
   */
  listedAt?: number
  status: DeliveryStatus
  /**
   * How many times a process took it up to run its handlers (one that died, or lost its lease
   * before starting, counts).
   */
  attempts: number
  /** The last failure, cleaned (code and message, no stack, bounded): never a body. */
  lastError?: string
  source: DeliverySource
  /** When it was first recorded, in ms since the epoch. */
  receivedAt: number
  updatedAt: number
  /**
   * The raw body as text (sealed with the ledger's cipher when it has one), kept for replay
   * until `bodyExpiresAt`; the entry outlives it.
   */
  body?: string
  bodyExpiresAt?: number
  /**
   * Set by the store: its account kept `maxBodiesPerAccount` bodies already when it arrived,
   * so its body was not kept (it ran as always; a replay cannot run it, `catchUp` recovers it).
   */
  bodyCapped?: true
  /** Who runs its handlers now, and until when (renewed while they run). */
  owner?: string
  leaseUntil?: number
}

/** An entry as a store holds it: its version moves on with each write. */
export interface StoredLedgerEntry extends LedgerEntry {
  version: number
}

/** The last delivery applied to one resource: later ones older than it are stale. */
export interface ResourceMark {
  /** The resource's key: the Event's id, under its account when the delivery has one. */
  resourceId: string
  /** `occurred_at` in ms since the epoch. */
  at: number
  /** The precedence of its type among deliveries of the same instant (see `precedenceOf`). */
  rank: number
  /** The ledger id of the delivery that set it. */
  by: string
  /** The resource's state that delivery carried. */
  state?: string
  /** The digest of the resource that delivery carried (what `catchUp` compares with the API's). */
  digest?: string
  /** Its `start_at`/`end_at`. */
  when?: string
  /** When it was applied, by this ledger's clock (a catch-up listed before it yields to it). */
  appliedAt?: number
  /** Set by a catch-up: when its listing began (its `at`, unless a later change's). */
  listedAt?: number
  /** Its time was given to the second (`occurred_at` with no fraction). */
  coarse?: true
}

export interface StoredResourceMark extends ResourceMark {
  version: number
}

/**
 * An error as the ledger keeps it: its name, code and message, and its first cause's (the
 * handler's own error under a `handler_failed`), cleaned and bounded; never a stack.
 */
export function cleanError(error: unknown): string {
  const one = (e: unknown): string => {
    if (!(e instanceof Error)) return String(e)
    const code = (e as { code?: unknown }).code
    return `${typeof code === 'string' ? `${e.name} (${code})` : e.name}: ${e.message}`
  }
  let cause: unknown = error instanceof Error ? error.cause : undefined
  if (cause instanceof AggregateError) cause = cause.errors[0]
  return serverText(cause === undefined ? one(error) : `${one(error)} Caused by ${one(cause)}`, 500)
}
