import type { AnyWebhookEvent } from '@scheduling-kit/core'
import type { ApiCounters, ApiFailure, AuthService } from '@scheduling-kit/fake-auth'
import type { TestEventOverrides } from './events.js'
import type { EventsFailure, ListedEvent } from './service-events.js'

// The fake scheduling service's options and the handle `startFakeSchedulingService` returns.

export interface FakeSchedulingServiceOptions {
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number
  host?: string
  clientId?: string
  clientSecret?: string
  /** Redirect URIs of the OAuth application; more with `allowRedirectUri`. */
  redirectUris?: string[]
  /** Approve at once instead of showing the consent page. Default false. */
  autoApprove?: boolean
  /** The application's name on the consent page. Default `Application <clientId>`. */
  appName?: string
  /** `expires_in` of access tokens, seconds. Default 7200. */
  expiresIn?: number
  /** Personal access tokens: token value to account id. */
  personalAccessTokens?: Record<string, string>
  /** Delays before each retry of a failed delivery, ms. Default 10 s, 1 min, 5 min, 30 min, 2 h. */
  retrySchedule?: number[]
  /** How long a receiver has to answer, ms. Default 10 000. */
  deliveryTimeoutMs?: number
  /**
   * Failed delivery attempts in a row after which the service sets a webhook `disabled` and
   * stops delivering to it (retries included). Default: never.
   */
  disableAfter?: number
  /**
   * Whether an account's event goes to each of its active webhooks (true, the default: during a
   * rotation the same payload id then reaches both) or to its newest one only.
   */
  deliverToEachWebhook?: boolean
  /**
   * PKCE on the authorization endpoint: `'required'` (the default) refuses a request without an
   * S256 `code_challenge`; `'optional'` accepts one without it, as the service's own reference
   * describes its flow (a request that sends a challenge is still held to it).
   */
  pkce?: 'required' | 'optional'
  /**
   * A reuse grace period for refresh tokens, in ms (Okta's, Auth0's reuse interval): a spent
   * refresh token presented again within it gets new tokens of the same grant. Default 0:
   * strict rotation.
   */
  reuseGraceMs?: number
}

/** A webhook as the fake service keeps it. */
export interface Webhook {
  id: string
  url: string
  secret: string
  /** Event types it receives; all when empty. */
  events: string[]
  /** `active`, or `disabled` / `deleted` (the service's doing): either gets no delivery. */
  state: 'active' | 'disabled' | 'deleted'
  /** The account whose events it receives; `undefined` for an app-wide webhook (`registerWebhook`, `connectApp`). */
  account: string | undefined
  created_at: string
  /** Failed deliveries in a row. */
  failures: number
}

/** What an app needs to talk to the fake service (see `connectApp`). */
export interface AppSettings {
  publicUrl: string
  redirectUri: string
  clientId: string
  clientSecret: string
  authUrl: string
  apiUrl: string
  webhookId: string
  webhookSecret: string
}

export interface DeliveryAttempt {
  deliveryId: string
  webhookId: string
  payloadId: string
  type: string
  attempt: number
  at: string
  /** The receiver's status, when it answered. */
  status?: number
  error?: string
  ok: boolean
  /** When the next attempt is due, if one is. */
  retryAt?: string
  /** What was sent: the signed request's headers and body (its first 8 KiB). */
  request?: { headers: Record<string, string>; body: string }
  /** What the receiver answered: its body's first 2 KiB. */
  answer?: string
}

/** Where `trigger` sends an event, and what it holds. */
export type TriggerOptions = TestEventOverrides & {
  /** The account the event belongs to: it goes to that account's active webhooks. */
  account?: string
  /** One webhook only. */
  webhookId?: string
  /**
   * The change happens, but its deliveries are lost (the service gave up on them, or never
   * sent them): the Event moves in `GET /v1/events`, no webhook is sent. For catch-up tests
   * that need no outage (and no wait for a retry schedule).
   */
  lost?: boolean
}

/** The fake service, running: its addresses, its OAuth side, and controls for tests. */
export interface FakeSchedulingService {
  /** Its address, `http://127.0.0.1:<port>`. */
  readonly url: string
  /** The authorization server's address (`authUrl` of the OAuth options). */
  readonly authUrl: string
  /** The API's address with its `/v1` prefix (`apiUrl` / `baseUrl`). */
  readonly apiUrl: string
  readonly clientId: string
  readonly clientSecret: string
  /** OAuth controls: `setAuthorize`, `failNext`, `setLatency`, `counters`, `tokenRequests`, ... */
  readonly auth: AuthService
  /**
   * Registers a webhook (a fresh secret unless one is given): app-wide, or an account's when
   * `account` is given (as the API's `POST /v1/webhooks` with that account's token does).
   */
  registerWebhook(input: {
    url: string
    secret?: string
    events?: string[]
    id?: string
    account?: string
  }): Webhook
  /** The webhooks, oldest first: every one, or one account's (`null`: the app-wide ones). */
  webhooks(account?: string | null): Webhook[]
  /** Sets a webhook's state as the service would on its own: `disabled`, or `deleted` (still listed). */
  setWebhookState(id: string, state: Webhook['state']): void
  /** Removes a webhook without a trace, as if the service lost it. */
  dropWebhook(id: string): void
  /**
   * Makes the next webhook API requests fail (429 with or without `Retry-After`, 5xx, slow,
   * landed); `count: 0` clears the ones still queued.
   */
  failApi(failure: ApiFailure): void
  /** Clears every injected failure still queued: the API's (`failApi`) and the token endpoint's. */
  clearFailures(): void
  /** What the webhook API answered so far. */
  readonly api: ApiCounters
  /** Successful `GET /v1/webhooks` answered, by the account that asked. */
  readonly listsByAccount: ReadonlyMap<string | undefined, number>
  /**
   * Wires an app at `publicUrl` to this service: its OAuth redirect URI allowed and its webhook
   * registered with a fresh secret. Returns the settings the app needs.
   */
  connectApp(publicUrl: string, paths?: { callback?: string; webhook?: string }): AppSettings
  /**
   * Sends an event of `type` and retries failed deliveries: with `account`, to that account's
   * active webhooks; with `webhookId`, to that webhook; else to the app-wide webhooks.
   */
  trigger(
    type: string,
    overrides?: TriggerOptions,
  ): Promise<{ event: AnyWebhookEvent; deliveries: DeliveryAttempt[] }>
  /** An account's Events as `GET /v1/events` lists them now (each moved by the `event.*` webhooks triggered). */
  events(account: string): ListedEvent[]
  /** The next `GET /v1/events` requests fail this way (429 with or without `Retry-After`, 5xx). */
  failEvents(failure: EventsFailure): void
  /** What `GET /v1/events` answered so far. */
  readonly eventLists: { requests: number; byStatus: Record<number, number> }
  /**
   * Sends a delivery again, as a service's "redeliver" button does: the same event (payload id)
   * to the same webhook, signed anew, a new delivery with its own retries.
   */
  redeliver(deliveryId: string): Promise<DeliveryAttempt>
  allowRedirectUri(uri: string): void
  /** Makes one access token, or all of an account's, expire now. */
  expireToken(tokenOrAccount: string): void
  revokeGrant(account: string): void
  /** Every delivery attempt so far, oldest first. */
  deliveries(): readonly DeliveryAttempt[]
  /** Resolves when no delivery is in flight or waiting for a retry. */
  idle(): Promise<void>
  close(): Promise<void>
}
