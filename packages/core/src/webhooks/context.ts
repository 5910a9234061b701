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
  /** The request headers. */
  headers: HeadersInput
}

export type WebhookHandlerFn<E = AnyWebhookEvent> = (
  event: E,
  context: WebhookContext,
) => unknown | Promise<unknown>
