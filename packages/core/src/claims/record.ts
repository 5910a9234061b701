import { isThenable } from '../thenable.js'
import type { DedupeStore } from './dedupe.js'
import { type RunOnceOptions, runOnce } from './run-once.js'

// One record per delivery: every path a delivery takes (the webhook handler, a queue's
// worker, a replay's or a catch-up's job) records it through a `DeliveryRecord`. Two kinds:
// the dedupe claim (here) and the delivery ledger (`DeliveryLedger`); `recordOf` chooses,
// once, for the handler and for the workers alike.

/** What the ledger reads of a verified envelope. */
export interface LedgerEnvelope {
  id: string
  type: string
  occurred_at?: string
  payload?: unknown
}

/** What the handler knows of a verified delivery. */
export interface VerifiedDelivery {
  envelope: LedgerEnvelope
  /** The dedupe key: the ledger id. */
  key: string
  webhookId?: string | undefined
  account?: string | undefined
  /** The verified body as text, kept for replay. */
  text: string
  /** Where it came from: the service (default), or the catch-up sweep. */
  source?: 'webhook' | 'catch-up'
  /** A catch-up delivery's listing time (see `LedgerEntry.listedAt`). */
  listedAt?: number
}

/** Told to the handlers by the ledger: a replay, a stale delivery run anyway. */
export interface LedgerContext {
  replay?: { of: string; reason: string }
  stale?: true
  catchUp?: true
}

/** What a replay asks for. */
export interface ReplayRequest {
  /** The ledger id replayed. */
  of: string
  reason: string
  /** Run it even if it is done (a deliberate re-run); else a done entry is not run again. */
  again?: boolean
}

/**
 * What came of a delivery: its handlers ran (or, handed off, it went into the queue); or they
 * did not, and why: handled already (`done`), older than what its Event last applied (`stale`),
 * past its attempts (`dead`), or held by another attempt now (`busy`: try it later).
 */
export type DeliveryOutcome = 'ran' | 'done' | 'stale' | 'dead' | 'busy'

/** How one delivery is run through its record. */
export interface RecordRunOptions {
  /** A queue's last attempt: a failure is final (the ledger makes the entry dead). */
  finalAttempt?: boolean
  /** A replay's job: only the ledger runs one (`runQueued` refuses it without a ledger). */
  replay?: ReplayRequest
  /**
   * A queue's job id. The claim's key in a worker: the delivery's own key is the app's claim,
   * completed once its job was enqueued.
   */
  jobKey?: string
}

/** Where a delivery is recorded: the dedupe claim, or the delivery ledger. */
export interface DeliveryRecord {
  /**
   * Runs `run` (the handlers) unless the record says not to; what came of it. Rethrows the
   * handlers' error once the failure is recorded (the retry may run it again).
   */
  deliver(
    delivery: VerifiedDelivery,
    run: (context?: LedgerContext) => unknown,
    options?: RecordRunOptions,
  ): DeliveryOutcome | Promise<DeliveryOutcome>
  /** Records a delivery handed to a queue and `put`s its job in: `ran` when it went in. */
  handOff(
    delivery: VerifiedDelivery,
    put: () => unknown,
  ): DeliveryOutcome | Promise<DeliveryOutcome>
}

/** How a claim is held while the handlers run. */
export type ClaimSettings = Pick<RunOnceOptions, 'renewMs' | 'settleMs' | 'onCompleteFailure'>

const outcomeOf = (once: Awaited<ReturnType<typeof runOnce>>): DeliveryOutcome =>
  once.ran ? 'ran' : once.claim === 'completed' ? 'done' : 'busy'

/**
 * The dedupe claim as a delivery's record: the key claimed, the handlers run, the claim
 * completed (or released when they throw). Without a store, no record: every delivery runs
 * (at least once; the handlers dedupe, if anything). Synchronous when the store and the
 * handlers are.
 */
export class ClaimRecord implements DeliveryRecord {
  readonly #store: DedupeStore | undefined
  readonly #settings: ClaimSettings

  constructor(store: DedupeStore | undefined, settings: ClaimSettings) {
    this.#store = store
    this.#settings = settings
  }

  deliver(
    delivery: VerifiedDelivery,
    run: () => unknown,
    options?: RecordRunOptions,
  ): DeliveryOutcome | Promise<DeliveryOutcome> {
    if (this.#store === undefined) {
      const ran = run()
      return isThenable(ran) ? Promise.resolve(ran).then(() => 'ran') : 'ran'
    }
    const once = runOnce(
      { ...this.#settings, store: this.#store, key: options?.jobKey ?? delivery.key },
      run,
    )
    return isThenable(once) ? once.then(outcomeOf) : outcomeOf(once)
  }

  handOff(
    delivery: VerifiedDelivery,
    put: () => unknown,
  ): DeliveryOutcome | Promise<DeliveryOutcome> {
    return this.deliver(delivery, put)
  }
}

/**
 * The one choice of a delivery's record, for the handler and every worker: the ledger when
 * there is one, else the dedupe claim, else none.
 */
export function recordOf(
  ledger: DeliveryRecord | undefined,
  dedupe: DedupeStore | undefined,
  claim: ClaimSettings,
): DeliveryRecord {
  return ledger ?? new ClaimRecord(dedupe, claim)
}
