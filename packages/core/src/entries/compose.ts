// @scheduling-kit/core/compose: a webhook path the app composes from parts, each of its own
// module, so a bundle carries only the parts named. Not at the root: `createWebhookHandler` is
// the preset. Every name here is pinned by test/package/exports.test.ts.

export { checkAccountSignature } from '../compose/accounts.js'
export { refuseOlderThan } from '../compose/age.js'
export { type BodyLimitOptions, readBody } from '../compose/body.js'
export { dedupe } from '../compose/dedupe.js'
export { parseEvent } from '../compose/event.js'
export { readFetchBody } from '../compose/fetch-body.js'
export { handlers } from '../compose/handlers.js'
export { logErrors } from '../compose/log.js'
export { checkSignatureByLookup } from '../compose/lookup.js'
export { acceptParsedBody } from '../compose/parsed-body.js'
export {
  type ComposeWebhooksOptions,
  composeWebhooks,
  type NextPart,
  type WebhookDelivery,
  type WebhookPart,
  type WebhookPath,
} from '../compose/path.js'
export { enqueueTo } from '../compose/queue.js'
export { recordIn } from '../compose/record.js'
export { checkSignature } from '../compose/signature.js'
export { traced } from '../compose/telemetry.js'
export type { DeliveryWatch } from '../webhooks/telemetry/contract.js'
export type { HeaderNames } from '../webhooks/verify.js'
