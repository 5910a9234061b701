// @scheduling-kit/core/adapter: the kit a framework adapter (or a store, or the queue's worker)
// is built from, and an app does not need. An adapter gets the raw body and headers from its
// framework, calls core, and writes core's answer back; what it decides is decided here once:
// which body to verify on Node, where the OAuth routes are under a mount, how a server error
// reaches the framework, when a cookie secret is required. CONTRIBUTING.md has the new-adapter
// checklist. Every name here is pinned by test/exports.test.ts.

export { cipherOption, RecordSealer } from './credentials/sealed.js'
export { serverText } from './errors.js'
export { HealthProblem, healthDetail, healthReport, runCheck } from './health.js'
export { decodeStoreKey, encodeStoreKey } from './keys.js'
export { requireCookieSecret } from './kit/cookie-secret.js'
export { mountPathOf, normalMount, OAUTH_PATHS, underMount } from './kit/mount.js'
export {
  type NodeResponse,
  type NodeStream,
  nodeBody,
  optionsOf,
  serverErrorOf,
  writeNode,
} from './kit/node.js'
export {
  appEventLogger,
  type ErrorEventApp,
  quietParserRefusals,
} from './kit/refusals.js'
export { consoleLogger } from './log.js'
export { inJobSpan, type JobSpanOptions } from './telemetry/job.js'
export { wholeNumber } from './validate.js'
export type { BodySource } from './webhooks/body.js'
export {
  type RunOnceOptions,
  type RunOnceOutcome,
  runOnce,
} from './webhooks/claim.js'
export { attachWebhookMethods, type WebhookMethods } from './webhooks/methods.js'
