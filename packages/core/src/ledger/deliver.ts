import { newOwnerId } from '../claims/owner.js'
import type {
  DeliveryOutcome,
  LedgerContext,
  LedgerEnvelope,
  VerifiedDelivery,
} from '../claims/record.js'
import { isThenable } from '../thenable.js'
import { shapeOf } from './digest.js'
import type { LedgerEntry, ResourceMark, StoredLedgerEntry } from './entry.js'
import { type Delivery, entryLayout } from './machine.js'
import { resourceKeyOf } from './order.js'

// A delivery through the ledger: recorded once, run under the ledger's lease, its outcome
// written back. The ledger knows nothing of the webhook handler: it is given the envelope's
// fields and a function that runs the handlers, and says what came of it.

/** A delivery the ledger lets run: its entry as written, and the claim it holds. */
export interface Running {
  entry: StoredLedgerEntry
  owner: string
  /** Older than what its resource last applied (run only with `stale: 'run'`). */
  stale: boolean
  /** The mark it sets once done, when not its own (`ordered`: a catch-up's place in time). */
  mark?: ResourceMark
}

/** What the ledger says of a delivery that arrived. */
export type Admission =
  | { action: 'run'; running: Running }
  | { action: 'skip'; status: 'done' | 'stale' | 'dead' }
  | { action: 'busy' }

/** What running a delivery needs of the ledger (`DeliveryLedger`). */
export interface LeasedLedger {
  /** Renews `running`'s lease while its handlers run, until the returned release is called. */
  hold(running: Running): () => void
  /**
   * Runs `work` after every earlier work of this process on the same resource has ended, and
   * under the resource's hold across processes when the store has holds (`busy` without it).
   */
  inTurn<T>(resourceId: string, id: string, work: () => Promise<T>, busy: T): Promise<T>
  /** Whether a delivery is queued or running in its resource's turn in this process. */
  inTurnHere(id: string): boolean
  /** Fields left out of a resource's digest (option `volatileFields`). */
  readonly volatile: ReadonlySet<string> | undefined
  delivery(
    fields: Omit<Delivery, 'body' | 'bodyExpiresAt'>,
    text: string,
  ): Delivery | Promise<Delivery>
  admit(delivery: Delivery, owner: string): Promise<Admission>
  received(delivery: Delivery): Promise<'recorded' | 'duplicate'>
  get(id: string): Promise<StoredLedgerEntry | undefined>
  renew(running: Running): Promise<boolean>
  finish(running: Running): Promise<void>
  fail(running: Running, error: unknown, finalAttempt?: boolean): Promise<LedgerEntry | undefined>
}

/** The resource a delivery changes: the Event's id, when its payload names one. */
export function resourceOf(envelope: LedgerEnvelope): { id?: string; state?: string } {
  const payload = envelope.payload as { id?: unknown; uri?: unknown; state?: unknown } | undefined
  if (payload === null || typeof payload !== 'object') return {}
  const id = typeof payload.id === 'string' ? payload.id : payload.uri
  if (typeof id !== 'string' || id.length === 0 || id.length > 256) return {}
  const { state } = payload
  return typeof state === 'string' && state.length <= 64 ? { id, state } : { id }
}

/** The ledger's fields of a verified delivery, its body aside. */
export function fieldsOf(
  delivery: VerifiedDelivery,
  source: Delivery['source'],
  volatile?: ReadonlySet<string>,
): Omit<Delivery, 'body' | 'bodyExpiresAt'> {
  const { envelope } = delivery
  const fields = entryLayout(delivery.key, envelope.id, envelope.type, source)
  if (delivery.webhookId !== undefined) fields.webhookId = delivery.webhookId
  if (delivery.account !== undefined) fields.account = delivery.account
  const resource = resourceOf(envelope)
  if (resource.id !== undefined) {
    fields.resourceId = resource.id
    const shape = shapeOf(envelope.payload as Record<string, unknown>, volatile)
    fields.resourceDigest = shape.digest
    if (shape.when !== undefined) fields.resourceWhen = shape.when
  }
  if (resource.state !== undefined) fields.resourceState = resource.state
  if (typeof envelope.occurred_at === 'string') fields.occurredAt = envelope.occurred_at
  if (source === 'catch-up' && delivery.listedAt !== undefined) fields.listedAt = delivery.listedAt
  return fields
}

/**
 * Runs the handlers of a delivery the ledger let run, its lease renewed meanwhile, and writes
 * the outcome: `done`, or `failed` (`dead` past the ledger's attempts) and the error rethrown.
 */
export async function runLeased(
  ledger: LeasedLedger,
  running: Running,
  run: (context: LedgerContext) => unknown,
  context: LedgerContext = {},
  /** A queue's last attempt: a failure makes the entry dead at once. */
  finalAttempt = false,
): Promise<void> {
  const release = ledger.hold(running)
  try {
    const ran = run(running.stale ? { ...context, stale: true } : context)
    if (isThenable(ran)) await ran
  } catch (error) {
    release()
    await ledger.fail(running, error, finalAttempt)
    throw error
  }
  release()
  await ledger.finish(running)
}

/** A verified delivery through the ledger: what came of it, or the handlers' error thrown. */
export async function deliverRecorded(
  ledger: LeasedLedger,
  delivery: VerifiedDelivery,
  run: (context: LedgerContext) => unknown,
  finalAttempt = false,
): Promise<DeliveryOutcome> {
  const kept = ledger.delivery(
    fieldsOf(delivery, delivery.source ?? 'webhook', ledger.volatile),
    delivery.text,
  )
  const recorded = isThenable(kept) ? await kept : kept
  const start = async (): Promise<DeliveryOutcome> => {
    const admission = await ledger.admit(recorded, newOwnerId())
    if (admission.action !== 'run') return admission.action === 'busy' ? 'busy' : admission.status
    const context: LedgerContext = delivery.source === 'catch-up' ? { catchUp: true } : {}
    await runLeased(ledger, admission.running, run, context, finalAttempt)
    return 'ran'
  }
  // Deliveries of one Event run one at a time in this process, each checked against the
  // Event's mark only once the one before it has ended. A retry of one queued or running here
  // is answered at once (409): it does not wait, nor run beside the others.
  if (recorded.resourceId !== undefined && ledger.inTurnHere(recorded.id)) return 'busy'
  return recorded.resourceId === undefined
    ? start()
    : ledger.inTurn(resourceKeyOf(recorded, recorded.resourceId), recorded.id, start, 'busy')
}

/**
 * A delivery handed to a queue: recorded `received`, then `put` in (so no worker can record
 * it first and make the first arrival look like a duplicate). `true`: its first arrival.
 * `false` when it was recorded before: if it is still `received` (its job may have been lost
 * on the way), it is put in again (a queue whose job id is the delivery's key makes no second
 * job of it); if a worker has it, it is not.
 */
export async function handOff(
  ledger: LeasedLedger,
  delivery: VerifiedDelivery,
  put: () => unknown,
): Promise<boolean> {
  const recorded = await ledger.received(
    await ledger.delivery(
      fieldsOf(delivery, delivery.source ?? 'webhook', ledger.volatile),
      delivery.text,
    ),
  )
  if (recorded === 'duplicate' && (await ledger.get(delivery.key))?.status !== 'received')
    return false
  await put()
  return recorded === 'recorded'
}
