import type { CredentialCipher } from '../credentials/types.js'
import { ConfigError } from '../errors/errors.js'
import type { Logger } from '../log.js'
import type { LedgerEntry } from './entry.js'
import type { LedgerStore } from './store.js'

// A ledger's options, checked once: a mistake is an `invalid_options` error at start-up.

export interface DeliveryLedgerOptions {
  store: LedgerStore
  /** Seals the bodies kept for replay (AES-256-GCM); without it they are kept as sent. */
  cipher?: CredentialCipher
  retention?: {
    /** How long a body is kept for replay, in ms. Default 7 days. */
    bodyMs?: number
    /** How long an entry is kept (its body gone), in ms. Default 30 days. */
    entryMs?: number
  }
  /**
   * Attempts after which a failing delivery is `dead`: the service's deliveries and replays
   * together. Default 5.
   */
  maxAttempts?: number
  /**
   * The lease a running delivery holds, renewed every third of it while its handlers run.
   * Default 10 000 ms: a delivery whose process was killed is taken up again (by the queue's
   * retry, by the service's) once it lapses, within about 15 s on either queue.
   */
  leaseMs?: number
  /**
   * With a store several processes share: how long a delivery waits for another process's
   * delivery of the same Event to end before it is answered 409 (the service tries again
   * later). Default 5 000 ms.
   */
  orderWaitMs?: number
  /**
   * A delivery older than the last one applied to its resource: `'skip'` (the default) records
   * it `stale` and runs nothing; `'run'` runs it with `context.stale`.
   */
  stale?: 'skip' | 'run'
  /**
   * Top-level fields of an Event that change without the Event changing (a read time, a view
   * count, if the service ever sends one): left out of the digest `catchUp` compares. Default
   * none: every field counts, unknown ones included.
   */
  volatileFields?: readonly string[]
  /** Told of each delivery that became `dead`. Its errors are logged, never thrown. */
  onDeadLetter?: (entry: LedgerEntry) => void | Promise<void>
  logger?: Logger
  /** Clock, for tests. */
  now?: () => number
}

const DAY = 86_400_000

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!Number.isFinite(value) || value <= 0)
    throw new ConfigError(`createDeliveryLedger: ${name} must be a positive number.`)
  return value
}

/** The options a ledger runs with, defaults filled in. */
export function resolveLedgerOptions(options: DeliveryLedgerOptions) {
  if (options === null || typeof options !== 'object' || typeof options.store?.write !== 'function')
    throw new ConfigError(
      'createDeliveryLedger: store is required (a MemoryLedgerStore, RedisLedgerStore or PostgresLedgerStore).',
    )
  if (options.stale !== undefined && options.stale !== 'skip' && options.stale !== 'run')
    throw new ConfigError("createDeliveryLedger: stale is 'skip' or 'run'.")
  const volatile = options.volatileFields
  if (
    volatile !== undefined &&
    (!Array.isArray(volatile) || volatile.some((field) => typeof field !== 'string'))
  )
    throw new ConfigError('createDeliveryLedger: volatileFields is a list of field names.')
  return {
    bodyMs: positive(options.retention?.bodyMs, 7 * DAY, 'retention.bodyMs'),
    entryMs: positive(options.retention?.entryMs, 30 * DAY, 'retention.entryMs'),
    maxAttempts: positive(options.maxAttempts, 5, 'maxAttempts'),
    leaseMs: positive(options.leaseMs, 10_000, 'leaseMs'),
    orderWaitMs: positive(options.orderWaitMs, 5_000, 'orderWaitMs'),
    stale: options.stale ?? 'skip',
    volatile: volatile === undefined || volatile.length === 0 ? undefined : new Set(volatile),
  } as const
}
