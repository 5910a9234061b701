import type { HeadersInput } from '../http/headers.js'
import type { AnyWebhookEvent } from './events.js'

/** What a handler learns about the delivery besides the event. */
export interface WebhookContext {
  /** The `x-service-webhook-id` header (`wh_<id>`), when sent. */
  webhookId: string | undefined
  /** Which secret verified the request (0 unless rotating). */
  secretIndex: number
  /**
   * The connected account the delivery belongs to (its token store key), when the handler
   * verifies with `subscriptions`: the account whose webhook's secret signed it.
   */
  account?: string
  /** The request headers (none on a replay). */
  headers: HeadersInput
  /**
   * Set when the ledger runs a recorded delivery again (`replay`): the ledger id it replays
   * and why. Absent on the service's own deliveries.
   */
  replay?: { of: string; reason: string }
  /**
   * Set when the delivery is older than the last one applied to its resource, and the ledger's
   * `stale` option is `'run'` (by default such a delivery does not run).
   */
  stale?: true
  /**
   * Set when the delivery was made by the ledger's catch-up sweep from the API's list of
   * events (the service's delivery was lost): `event.payload` is the Event as listed now.
   */
  catchUp?: true
}

export type WebhookHandlerFn<E = AnyWebhookEvent> = (
  event: E,
  context: WebhookContext,
) => unknown | Promise<unknown>
