import type { WebhookError } from '../errors/errors.js'
import { utf8Length } from '../platform/bytes.js'

/** The answer in plain data, for an adapter to write back. */
export interface WebhookResponse {
  status: number
  headers: Record<string, string>
  body: string
  /** On an error answer, the error: for an adapter that hands server errors to its framework. */
  error?: WebhookError
}

const JSON_TYPE = 'application/json; charset=utf-8'

// Every answer states its length: Node then sends it in one piece rather than chunked.
export function json(
  status: number,
  value: unknown,
  extra?: Record<string, string>,
): WebhookResponse {
  const body = JSON.stringify(value)
  // A fresh headers object per answer: adapters and apps may add to it.
  const headers = { 'content-type': JSON_TYPE, 'content-length': String(utf8Length(body)) }
  return { status, headers: { ...headers, ...extra }, body }
}

/** A constant answer: its body, and the length of that body as the header says it. */
function constant(body: string): () => WebhookResponse {
  const length = String(utf8Length(body))
  return () => ({
    status: 200,
    headers: { 'content-type': JSON_TYPE, 'content-length': length },
    body,
  })
}

/** 200: the event was handled, or accepted into the queue. */
export const received = /* @__PURE__ */ constant(/* @__PURE__ */ JSON.stringify({ received: true }))

/** 200: a retry of an event already handled; its handlers did not run again. */
export const DUPLICATE_BODY = /* @__PURE__ */ JSON.stringify({ received: true, duplicate: true })
export const duplicate = /* @__PURE__ */ constant(DUPLICATE_BODY)

/**
 * 200 for a delivery its record did not run: handled already (`done`, a duplicate), older than
 * what its Event last applied (`stale`), or past its attempts (`dead`).
 */
export function notRun(came: 'done' | 'stale' | 'dead'): WebhookResponse {
  return came === 'done' ? duplicate() : json(200, { received: true, [came]: true })
}

/** 200: a late delivery to a webhook of an account this app removed; no handler ran. */
export const REMOVED_BODY = /* @__PURE__ */ JSON.stringify({ received: true, removed: true })
export const removed = /* @__PURE__ */ constant(REMOVED_BODY)

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
