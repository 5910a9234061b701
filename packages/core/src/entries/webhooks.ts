// @scheduling-kit/core/webhooks: receiving signed webhooks: the handler, events, signatures, duplicates. The root re-exports it whole.
// Every name here is pinned by test/package/exports.test.ts.

export {
  type ClaimResult,
  type DedupeStore,
  type EarlyEviction,
  MemoryDedupeStore,
  type MemoryDedupeStoreOptions,
} from '../claims/dedupe.js'
export type { HeadersInput } from '../http/headers.js'
export type { WebhookResponse } from '../webhooks/answer.js'
export { type ConstructEventOptions, constructEvent } from '../webhooks/construct.js'
export type { WebhookContext, WebhookHandlerFn } from '../webhooks/context.js'
export type { WebhookHandler, WebhookRegistration } from '../webhooks/contract.js'
export { parseEnvelope } from '../webhooks/envelope.js'
export {
  type AnyWebhookEvent,
  type CustomWebhookPayloads,
  type DefaultWebhookPayloads,
  EVENT_TYPES,
  type EventAttendee,
  type EventConferencing,
  type EventPayment,
  type EventResource,
  type EventState,
  isEventType,
  isKnownEventType,
  type OpenRecord,
  type PayloadId,
  type SchedulingLink,
  type UnknownWebhookEvent,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookPayload,
  type WorkflowAction,
  type WorkflowActionPayload,
} from '../webhooks/events.js'
export { createWebhookHandler } from '../webhooks/handler.js'
export type {
  SubscriptionLookup,
  WebhookErrorContext,
  WebhookErrorFn,
  WebhookHandlerOptions,
  WebhookHandlerRestOptions,
} from '../webhooks/options.js'
export type { QueueDelivery, WebhookQueue } from '../webhooks/queue.js'
export type {
  EventPattern,
  EventPrefixPattern,
  EventsMatching,
  HandlerMap,
} from '../webhooks/registry.js'
export type { WebhookRequest } from '../webhooks/request.js'
export type { SecretLookup, SecretSource } from '../webhooks/secrets.js'
export {
  matchSignature,
  type RawBody,
  type Secrets,
  signPayload,
  verifySignature,
} from '../webhooks/signature.js'
