import { createSchedulingClient, type SchedulingClient } from '../api/client.js'
import type { CursorPageOptions } from '../api/paginate.js'
import type { WebhooksApi } from '../api/webhooks.js'
import { isApiError } from '../errors/api.js'
import { ConfigError } from '../errors/errors.js'
import { displayUrl } from '../errors/transport.js'
import { withoutTrailingSlashes } from '../http/paths.js'
import type { WebhookSubscriptionsOptions } from './options.js'

/**
 * A 404 on `GET /webhooks` or `POST /webhooks` is no state of an account: the address is wrong
 * (most often `apiUrl` without its `/v1`). It becomes a `ConfigError` naming the fix, so that
 * nobody is told the webhook "is set up again automatically", and `reconcile` reports it as
 * configuration rather than trying again forever.
 */
function configured(apiUrl: string, what: string) {
  return (error: unknown): never => {
    if (!isApiError(error, 404)) throw error
    const base = displayUrl(apiUrl)
    const hint = /\/v\d+\/?$/.test(new URL(apiUrl).pathname)
      ? "Check apiUrl: it must be the API's address."
      : `apiUrl has no version prefix: the service's API lives under /v1 (e.g. ${withoutTrailingSlashes(base)}/v1).`
    throw new ConfigError(
      `createWebhookSubscriptions: ${what} answered 404 at ${base}: the address is not the service's webhook API. ${hint} Nothing can be set up until it is fixed.`,
      { cause: error },
    )
  }
}

async function* listed(
  webhooks: WebhooksApi,
  apiUrl: string,
  options?: Parameters<WebhooksApi['list']>[0],
) {
  try {
    yield* webhooks.list(options)
  } catch (error) {
    configured(apiUrl, 'GET /webhooks')(error)
  }
}

/** The account's API client, its webhook list and create telling a wrong `apiUrl` apart. */
export function subscriptionClient(
  options: WebhookSubscriptionsOptions,
  key: string,
): SchedulingClient {
  const client = createSchedulingClient({
    baseUrl: options.apiUrl,
    token: { manager: options.tokens, key },
    fetch:
      options.rateCap === undefined
        ? options.fetch
        : options.rateCap.wrap(options.fetch ?? ((input, init) => fetch(input, init))),
    retry: options.retry,
    timeoutMs: options.timeoutMs ?? 10_000,
  })
  const { webhooks } = client
  return {
    me: <T>() => client.me<T>(),
    request: <T>(path: string, init?: RequestInit) => client.request<T>(path, init),
    paginate: <T>(path: string, pageOptions?: CursorPageOptions) =>
      client.paginate<T>(path, pageOptions),
    webhooks: {
      ...webhooks,
      list: (listOptions) => listed(webhooks, options.apiUrl, listOptions),
      create: (input) => webhooks.create(input).catch(configured(options.apiUrl, 'POST /webhooks')),
    },
    events: client.events,
  }
}
