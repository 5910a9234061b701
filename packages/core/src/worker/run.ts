import type { DedupeStore } from '../claims/dedupe.js'
import {
  type DeliveryOutcome,
  type DeliveryRecord,
  recordOf,
  type VerifiedDelivery,
} from '../claims/record.js'
import { ConfigError } from '../errors/errors.js'
import type { WebhookHandler } from '../webhooks/contract.js'
import { dispatchQueued, type QueuedDelivery } from './job.js'

// How a queue's worker runs one job, on any queue package: through the delivery's record, as
// the webhook handler does (the ledger: a live delivery, a replay or a catch-up, each under the
// claim and the order a live retry takes; else the dedupe claim; else at least once).

/** What a worker runs its jobs with. */
export interface QueuedRunSettings {
  /** What runs the handlers: the webhook handler (or an adapter middleware's `.handler`). */
  handler: Pick<WebhookHandler, 'dispatch'>
  /** The ledger the app records in: the job's record when given. */
  ledger?: DeliveryRecord | undefined
  /** Else where jobs are marked handled; none: at least once. */
  dedupe?: DedupeStore | undefined
  /** How long a dedupe claim lasts if its worker dies; renewed every third of it. */
  claimMs: number
}

/** What came of a job: its handlers ran; or they did not, and why (`busy`: try it later). */
export type QueuedOutcome = DeliveryOutcome

/**
 * Runs one job's delivery through its record (`recordOf`: the ledger, else the dedupe claim on
 * the job's own id, else none). `jobKey` is the job's own id; `finalAttempt` makes a failure a
 * dead letter at once. The handlers' error is thrown (the queue retries the job); `busy` means
 * another attempt holds the delivery or its Event now: put the job back for later, without
 * spending an attempt.
 */
export function runQueued(
  settings: QueuedRunSettings,
  data: QueuedDelivery,
  jobKey: string,
  finalAttempt: boolean,
): Promise<QueuedOutcome> {
  const { handler, ledger, dedupe, claimMs } = settings
  const { event, webhookId, account, key, replay, listedAt } = data
  if (replay !== undefined && ledger === undefined)
    return Promise.reject(
      new ConfigError(
        "A replay's job reached a worker without the ledger option: give the worker the app's ledger, so the replay is checked and recorded.",
      ),
    )
  // The claim follows the handler: renewed while it runs. A failed completion leaves the
  // claim to lapse after claimMs; the job is done either way.
  const record = recordOf(ledger, dedupe, {
    renewMs: Math.max(1, Math.floor(claimMs / 3)),
    settleMs: claimMs,
    onCompleteFailure: 'ignore',
  })
  const delivery: VerifiedDelivery = {
    envelope: event,
    key: key ?? event.id,
    webhookId,
    account,
    text: JSON.stringify(event),
    ...(listedAt === undefined ? {} : { source: 'catch-up' as const, listedAt }),
  }
  return Promise.resolve().then(() =>
    record.deliver(delivery, (extra) => dispatchQueued(handler, data, extra), {
      finalAttempt,
      jobKey,
      ...(replay === undefined ? {} : { replay }),
    }),
  )
}
