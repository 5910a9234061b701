import type { CredentialErrorCode } from './codes.js'
import { SchedulingError } from './errors.js'

// Errors of the stores (token, subscription, dedupe) and of sealed credentials.
/**
 * A write was refused because the stored record changed since it was read (another process
 * refreshed, or the user reconnected). The newer record is kept.
 */
export class StaleWriteError extends SchedulingError<'stale_write'> {
  readonly key: string

  constructor(key: string) {
    super(
      'stale_write',
      `The tokens for "${key}" changed while this process refreshed them; the newer ones were kept.`,
      { status: 409 },
    )
    this.key = key
  }
}

/**
 * The token manager (or another long-lived part) was closed: it finishes the work it had, and
 * refuses new work with this error. Raised after `close()`, during a graceful shutdown.
 */
export class ClosedError extends SchedulingError<'closed'> {
  constructor(what: string) {
    super('closed', `${what} is closed: it is shutting down and takes no new work.`, {
      status: 503,
    })
  }
}

/**
 * Another instance held an account's subscription lease for longer than this one would wait
 * (`leaseWaitMs`), or kept changing its record: nothing was changed; try again.
 */
export class SubscriptionBusyError extends SchedulingError<'subscription_busy'> {
  readonly key: string

  constructor(what: string, key: string, waitedMs: number) {
    super(
      'subscription_busy',
      `Could not ${what} "${key}": another instance is changing its webhooks${waitedMs > 0 ? ` (waited ${waitedMs} ms for its lease)` : ''}. Nothing was changed; try again.`,
      { status: 503 },
    )
    this.key = key
  }
}

/**
 * An in-memory store told not to forget entries before their time (`whenFull: 'refuse'`) is
 * full of unexpired ones: the write is refused rather than forgetting a key that must be kept
 * (a used sign-in state, say).
 */
export class StoreFullError extends SchedulingError<'store_full'> {
  constructor(what: string, maxEntries: number) {
    super(
      'store_full',
      `${what} holds ${maxEntries} unexpired entries, its limit (maxEntries): this one was refused rather than forgetting one before its time. Raise maxEntries, or use a shared store (Redis, PostgreSQL).`,
      { status: 503 },
    )
  }
}

/**
 * A memory store at its `maxBytes`: `store_full`, its message naming that limit. A function
 * beside the class, not a constructor option: the webhook handler's bundle carries the class.
 */
export function bytesFull(what: string, maxBytes: number): StoreFullError {
  const error = new StoreFullError(what, maxBytes)
  error.message = `${what} holds ${maxBytes} bytes, its limit (maxBytes): this one was refused rather than forgetting one before its time. Raise maxBytes, or use a shared store (Redis, PostgreSQL).`
  return error
}

/**
 * A database store's table does not exist: run its `migrate()` at start-up, with the same
 * schema and table names. `cause` is the database's error.
 */
export class StoreNotMigratedError extends SchedulingError<'store_not_migrated'> {
  /** The table the store looked for. */
  readonly table: string

  constructor(who: string, table: string, options?: { cause?: unknown }) {
    super(
      'store_not_migrated',
      `${who}: table ${table} does not exist. Run migrate(pool) at start-up (with the same schema and table names).`,
      { status: 500, cause: options?.cause },
    )
    this.table = table
  }
}

/**
 * A scan over a store (`keys()`, `reencrypt()`) could not cover every record: a Redis Cluster's
 * topology changed under it, or a node did not answer, and scanning again did not help. What
 * it did was kept; what it missed was not seen, so the result must not be taken as complete:
 * run it again once the store is whole.
 */
export class IncompleteScanError extends SchedulingError<'scan_incomplete'> {
  constructor(who: string, why: string, options?: { cause?: unknown }) {
    super(
      'scan_incomplete',
      `${who}: the scan could not cover every record (${why}). Run it again.`,
      {
        status: 503,
        cause: options?.cause,
      },
    )
  }
}

/**
 * A stored credential could not be opened. It names the store key and the key id (never a
 * key, a token or a secret). The record is left as it is: this is not "no record", and not
 * "reauthorization required"; fix the cipher's keys (or restore the record) and it reads again.
 */
export class CredentialError extends SchedulingError<CredentialErrorCode> {
  /** The store key of the record. */
  readonly key: string
  /** The key id the sealed value names, when it names one. */
  readonly keyId: string | undefined

  constructor(code: CredentialErrorCode, key: string, keyId: string | undefined, why: string) {
    super(code, `Cannot open the sealed credentials of "${key}": ${why}.`, { status: 500 })
    this.key = key
    this.keyId = keyId
  }
}
