// @scheduling-kit/koa/webhooks: the webhooks middleware alone. An app that only receives
// webhooks imports this and loads nothing of OAuth, subscriptions, the ledger or telemetry.
// Event and option types: `import type { ... } from '@scheduling-kit/koa'` (erased at build,
// it loads nothing); core's functions of the same path are at `@scheduling-kit/core/webhooks`.
export { type SchedulingWebhooksMiddleware, schedulingWebhooks } from '../webhooks.js'
