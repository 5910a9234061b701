import type { DedupeStore } from '../claims/dedupe.js'
import { runOnce } from '../claims/run-once.js'
import { ConfigError } from '../errors/errors.js'
import type { DeliveryOutcome, LedgerContext, VerifiedDelivery } from '../ledger/deliver.js'
import type { DeliveryLedger } from '../ledger/ledger.js'
import type { WebhookHandler } from './contract.js'
import { dispatchQueued, type QueuedDelivery } from './queued.js'

// How a queue's worker runs one job, on any queue package: through the ledger (a live
// delivery, a replay or a catch-up, each under the claim and the order a live retry takes),
// else under a dedupe claim, else at least once. The one place a worker's record is chosen.

/** What a worker runs its jobs with. */
export interface QueuedRunSettings {
  /** What runs the handlers: the webhook handler (or an adapter middleware's `.handler`). */
  handler: Pick<WebhookHandler, 'dispatch'>
  /** The ledger the app records in: the job's record when given. */
  ledger?: Pick<DeliveryLedger, 'deliver'> | undefined
  /** Else where jobs are marked handled; none: at least once. */
  dedupe?: DedupeStore | undefined
  /** How long a dedupe claim lasts if its worker dies; renewed every third of it. */
  claimMs: number
}

/** What came of a job: its handlers ran; or they did not, and why (`busy`: try it later). */
export type QueuedOutcome = DeliveryOutcome

/**
 * Runs one job's delivery. `jobKey` is the job's own id (the dedupe claim's key without a
 * ledger); `finalAttempt` makes a failure a dead letter at once. The handlers' error is
 * thrown (the queue retries the job); `busy` means another attempt holds the delivery or its
 * Event now: put the job back for later, without spending an attempt.
 */
export async function runQueued(
  settings: QueuedRunSettings,
  data: QueuedDelivery,
  jobKey: string,
  finalAttempt: boolean,
): Promise<QueuedOutcome> {
  const { handler, ledger, dedupe, claimMs } = settings
  const dispatch = (extra?: LedgerContext) => dispatchQueued(handler, data, extra)
  const { event, webhookId, account, key, replay, listedAt } = data
  if (ledger !== undefined) {
    const delivery: VerifiedDelivery = {
      envelope: event,
      key: key ?? event.id,
      webhookId,
      account,
      text: JSON.stringify(event),
      ...(listedAt === undefined ? {} : { source: 'catch-up' as const, listedAt }),
    }
    return ledger.deliver(delivery, dispatch, {
      finalAttempt,
      ...(replay === undefined ? {} : { replay }),
    })
  }
  if (replay !== undefined)
    throw new ConfigError(
      "A replay's job reached a worker without the ledger option: give the worker the app's ledger, so the replay is checked and recorded.",
    )
  if (dedupe === undefined) {
    await dispatch()
    return 'ran'
  }
  // The claim follows the handler: renewed while it runs. A failed completion leaves the
  // claim to lapse after claimMs; the job is done either way.
  const once = await runOnce(
    {
      store: dedupe,
      key: jobKey,
      renewMs: Math.max(1, Math.floor(claimMs / 3)),
      settleMs: claimMs,
      onCompleteFailure: 'ignore',
    },
    () => dispatch(),
  )
  if (once.ran) return 'ran'
  return once.claim === 'completed' ? 'done' : 'busy'
}
