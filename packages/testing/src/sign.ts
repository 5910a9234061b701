import { signPayload } from '@scheduling-kit/core'

export const WEBHOOK_USER_AGENT = 'Scheduling Webhooks (https://scheduling.example)'

export interface SignedRequestOptions {
  secret: string
  /** The webhook's id, `wh_<id>`. Default `wh_test`. */
  webhookId?: string
}

/**
 * The body and headers the service sends for an event (section 6.2): upper-case hex signature.
 *
 * @example
 * ```ts
 * const { body, headers } = await signedRequest(createTestEvent('event.created'), { secret })
 * const res = await fetch('http://127.0.0.1:3000/webhooks/scheduling', { method: 'POST', headers, body })
 * ```
 */
export async function signedRequest(
  event: unknown,
  options: SignedRequestOptions,
): Promise<{ body: string; headers: Record<string, string> }> {
  const body = typeof event === 'string' ? event : JSON.stringify(event)
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': WEBHOOK_USER_AGENT,
      'x-service-signature': await signPayload(body, options.secret),
      'x-service-webhook-id': options.webhookId ?? 'wh_test',
    },
  }
}

/**
 * POSTs one signed event to a receiver, as the service would.
 *
 * @example
 * ```ts
 * const event = createTestEvent('event.created')
 * const { status } = await sendTestEvent('http://127.0.0.1:3000/webhooks/scheduling', event, { secret })
 * ```
 */
export async function sendTestEvent(
  url: string,
  event: unknown,
  options: SignedRequestOptions,
): Promise<{ status: number; body: string }> {
  const { body, headers } = await signedRequest(event, options)
  const res = await fetch(url, { method: 'POST', headers, body, redirect: 'manual' })
  return { status: res.status, body: await res.text() }
}
