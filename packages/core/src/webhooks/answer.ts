import type { WebhookError } from '../errors.js'

/** The answer in plain data, for an adapter to write back. */
export interface WebhookResponse {
  status: number
  headers: Record<string, string>
  body: string
  /** On an error answer, the error: for an adapter that hands server errors to its framework. */
  error?: WebhookError
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' }

export function json(
  status: number,
  value: unknown,
  extra?: Record<string, string>,
): WebhookResponse {
  // A fresh headers object per answer: adapters and apps may add to it.
  return { status, headers: { ...JSON_HEADERS, ...extra }, body: JSON.stringify(value) }
}

const RECEIVED_BODY = JSON.stringify({ received: true })
const DUPLICATE_BODY = JSON.stringify({ received: true, duplicate: true })

/** 200: the event was handled, or accepted into the queue. */
export const received = (): WebhookResponse => ({
  status: 200,
  headers: { ...JSON_HEADERS },
  body: RECEIVED_BODY,
})

/** 200: a retry of an event already handled; its handlers did not run again. */
export const duplicate = (): WebhookResponse => ({
  status: 200,
  headers: { ...JSON_HEADERS },
  body: DUPLICATE_BODY,
})

const REMOVED_BODY = JSON.stringify({ received: true, removed: true })

/** 200: a late delivery to a webhook of an account this app removed; no handler ran. */
export const removed = (): WebhookResponse => ({
  status: 200,
  headers: { ...JSON_HEADERS },
  body: REMOVED_BODY,
})

/** The JSON error answer, with `Allow` on a 405 and `Connection: close` when the body was left unread. */
export function errorAnswer(error: WebhookError): WebhookResponse {
  const extra: Record<string, string> = {}
  if (error.code === 'method_not_allowed') extra.allow = 'POST'
  if (
    error.code === 'payload_too_large' ||
    error.code === 'body_timeout' ||
    error.code === 'server_busy'
  )
    extra.connection = 'close'
  return json(error.status, error.toJSON(), extra)
}
