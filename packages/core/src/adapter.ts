// @scheduling-kit/core/adapter: the plumbing a framework adapter (or a store, or the queue's
// worker) needs and an app does not.
// An adapter gets the raw body and headers from its framework, calls core, and writes core's
// answer back. Every name here is pinned by test/exports.test.ts.

export { cipherOption, RecordSealer } from './credentials/sealed.js'
export { serverText } from './errors.js'
export { getHeader } from './headers.js'
export { decodeStoreKey, encodeStoreKey } from './keys.js'
export { consoleLogger, Summarizer } from './log.js'
export { withoutTrailingSlashes } from './paths.js'
export {
  BodyBudget,
  type BodySource,
  type FrameworkName,
  readBody,
  tooLarge as payloadTooLargeError,
} from './webhooks/body.js'
export { keepClaim, settleClaim } from './webhooks/claim.js'
export { attachWebhookMethods, type WebhookMethods } from './webhooks/methods.js'
