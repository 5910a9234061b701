// @scheduling-kit/express/webhooks: the webhooks middleware alone, with core's webhook path (events,
// signatures, the dedupe store: @scheduling-kit/core/webhooks, which the middleware loads
// anyway). An app that only receives webhooks imports this and loads nothing of OAuth,
// subscriptions, the ledger or telemetry.

export * from '@scheduling-kit/core/webhooks'
export {
  type ExpressWebhookOptions,
  keepRawBody,
  type SchedulingWebhooksMiddleware,
  type SchedulingWebhooksOptions,
  schedulingWebhooks,
} from '../webhooks.js'
