import { isApiError } from '../errors/api.js'
import { InvalidResponseError } from '../errors/transport.js'
import type { CursorPageOptions } from './paginate.js'
import { paginate } from './paginate.js'

/** A webhook as the API returns it. Lists may leave out `secret` and `state`. */
export interface ApiWebhook {
  /** `wh_...` */
  id: string
  url: string
  /** The signing secret: in a create's answer; lists and reads may leave it out. */
  secret?: string
  /** `active`, `disabled` (make a new one) or `deleted`; absent from some answers. */
  state?: 'active' | 'disabled' | 'deleted' | (string & {})
  version?: string
  created_at?: string
  [field: string]: unknown
}

/** What `webhooks.create` answers: the record, with its secret. */
export type CreatedWebhook = ApiWebhook & { secret: string }

export interface WebhooksApi {
  /** Every webhook of the account, following the cursor over as many pages as there are. */
  list(options?: Omit<CursorPageOptions, 'query'>): AsyncIterable<ApiWebhook>
  /** One webhook, or `undefined` when it does not exist or is not this account's (404). */
  get(id: string): Promise<ApiWebhook | undefined>
  /**
   * Creates a webhook receiving every event of the account. A 422 throws an `ApiError` whose
   * message and `fields` name the field. Never retried after a 5xx or a lost answer: it may
   * have landed; list to find out.
   */
  create(input: { url: string }): Promise<CreatedWebhook>
  /** Deletes a webhook; `undefined` when it was already gone (404), so a retry is harmless. */
  delete(id: string): Promise<ApiWebhook | undefined>
}

type Requester = <T>(path: string, init?: RequestInit) => Promise<T>

const path = (id: string) => `/webhooks/${encodeURIComponent(id)}`

const missing = (error: unknown) => {
  if (isApiError(error, 404)) return undefined
  throw error
}

export function webhooksApi(request: Requester): WebhooksApi {
  return {
    list: (options) => paginate<ApiWebhook>(request, '/webhooks', options),
    get: (id) => request<ApiWebhook>(path(id)).catch(missing),
    create: async ({ url }) => {
      const created = await request<CreatedWebhook>('/webhooks', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      })
      if (typeof created?.id !== 'string' || typeof created.secret !== 'string') {
        throw new InvalidResponseError('POST /webhooks', 'the created webhook has no id or secret')
      }
      return created
    },
    delete: (id) => request<ApiWebhook>(path(id), { method: 'DELETE' }).catch(missing),
  }
}
