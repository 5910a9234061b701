// @scheduling-kit/core/adapter: the kit a framework adapter is built from, and an app does not
// need. An adapter gets the raw body and headers from its framework, calls core, and writes
// core's answer back; what it decides is decided here once: which body to verify on Node, where
// the OAuth routes are under a mount, how a server error reaches the framework, when a cookie
// secret is required. CONTRIBUTING.md has the new-adapter checklist. Stores build on
// `/store`, queues on `/queue`. Every name here is pinned by test/package/exports.test.ts.

export { requireCookieSecret } from '../kit/cookie-secret.js'
export { mountPathOf, normalMount, OAUTH_PATHS, underMount } from '../kit/mount.js'
export { type NodeResponse, optionsOf, serverErrorOf, writeNode } from '../kit/node.js'
export { appEventLogger, type ErrorEventApp, quietParserRefusals } from '../kit/refusals.js'
export { type NodeStream, nodeBody } from '../webhooks/body/node.js'
export type { BodySource } from '../webhooks/body/streams.js'
// The handler the middlewares wrap, also here (the one name of the root in this entry): an
// adapter's webhook path then resolves one entry of core, not two.
export { createWebhookHandler } from '../webhooks/handler.js'
export { attachWebhookMethods, type WebhookMethods } from '../webhooks/methods.js'
