/**
 * The dedupe claim the handler holds while the handlers run (or the enqueue): renewed every
 * 10 s with a store that can (`extend`); a failed `complete` or `release` retried for 5 s
 * before it is left to lapse.
 */
export const HANDLER_CLAIM = { renewMs: 10_000, settleMs: 5_000 }
/** The path the webhook handler answers, relative to where it is mounted. */
export const DEFAULT_WEBHOOK_PATH = '/webhooks/scheduling'
/** Largest webhook body accepted, in bytes: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024
/** How long a body may take to arrive once the headers have, in ms. */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000
/** The header carrying `sha256=<hex>`. */
export const DEFAULT_SIGNATURE_HEADER = 'x-service-signature'
/** The header carrying the webhook id `wh_<id>`. */
export const DEFAULT_WEBHOOK_ID_HEADER = 'x-service-webhook-id'
/** Most bytes held at once by webhook bodies still arriving, across requests: 64 MiB. */
export const DEFAULT_MAX_PENDING_BYTES = 64 * 1024 * 1024
