// @scheduling-kit/koa/webhooks: the webhooks middleware alone, with core's webhook path (events,
// signatures, the dedupe store: @scheduling-kit/core/webhooks, which the middleware loads
// anyway). An app that only receives webhooks imports this and loads nothing of OAuth,
// subscriptions, the ledger or telemetry.

export * from '@scheduling-kit/core/webhooks'
export { type SchedulingWebhooksMiddleware, schedulingWebhooks } from '../webhooks.js'
