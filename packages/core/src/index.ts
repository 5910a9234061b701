// @scheduling-kit/core: every concern's public names, for the common path (`import { ... } from
// '@scheduling-kit/core'`). Each concern also has its own entry point with just its names
// (`@scheduling-kit/core/webhooks`, `/oauth`, ...): the same bindings, pinned one by one by
// test/package/exports.test.ts. Plumbing for adapters, stores and queues is at `/adapter`, `/store` and
// `/queue`, never here. CONTRIBUTING.md says why the root keeps the whole list.

export * from './entries/client.js'
export * from './entries/credentials.js'
export * from './entries/errors.js'
export * from './entries/lazy.js'
export * from './entries/ledger.js'
export * from './entries/oauth.js'
export * from './entries/page.js'
export * from './entries/setup.js'
export * from './entries/subscriptions.js'
export * from './entries/telemetry.js'
export * from './entries/tokens.js'
export * from './entries/webhooks.js'
