// @scheduling-kit/core/client: calling the API with a token: the client, its webhooks and events APIs. The root re-exports it whole.
// Every name here is pinned by test/package/exports.test.ts.

export {
  createSchedulingClient,
  type SchedulingClient,
  type SchedulingClientOptions,
  type SchedulingUser,
} from '../api/client.js'
export type { ApiEvent, EventListOptions, EventsApi } from '../api/events.js'
export type { CursorPage, CursorPageOptions } from '../api/paginate.js'
export type { ApiRetryOptions } from '../api/retry.js'
export type { ApiWebhook, CreatedWebhook, WebhooksApi } from '../api/webhooks.js'
export { ApiError, isApiError } from '../errors/api.js'
export type { FetchLike } from '../http/fetch.js'
