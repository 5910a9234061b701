// What every doc block may use without declaring it: the app's own names that the pages leave
// to the reader (its database, its Redis client, its handlers, the options built earlier on the
// page). The framework's `app` and the adapter's functions come from the block's context
// (express.d.ts by default; koa, fastify, h3).
import type {
  CredentialCipher,
  DedupeStore,
  DeliveryLedger,
  OAuthClient,
  OAuthRoutesOptions,
  SubscriptionStore,
  TokenManager,
  TokenStore,
  WebhookSubscriptions,
} from '@scheduling-kit/core'
import type { Redis as RedisClient } from 'ioredis'
import type { Pool } from 'pg'

declare global {
  /** The delivery ledger the page set up before. */
  const ledger: DeliveryLedger
  /** The app's own work for an event. */
  const book: (payload: unknown) => Promise<void>
  const saveBooking: (payload: unknown) => Promise<void>
  const notifyOwner: (...args: unknown[]) => Promise<void>
  const bookings: {
    add(...args: unknown[]): Promise<void>
    update(...args: unknown[]): Promise<void>
    cancel(...args: unknown[]): Promise<void>
  }
  const payments: { update(...args: unknown[]): Promise<void> }
  const log: { info(...args: unknown[]): void; warn(...args: unknown[]): void }
  /** The app's database, of any shape. */
  // biome-ignore lint/suspicious/noExplicitAny: the app's own database, whatever it is
  const db: any
  const redis: RedisClient
  const pool: Pool
  const connection: { url: string }
  const connectionString: string
  /** The OAuth application's settings and the app's secrets, from its configuration. */
  const secret: string
  const oldSecret: string
  const newSecret: string
  const clientId: string
  const clientSecret: string
  const redirectUri: string
  const authUrl: string
  const apiUrl: string
  const url: string
  const cookieSecret: string
  /** The app's credential cipher (`createCredentialCipher`). */
  const cipher: CredentialCipher
  const accountId: string
  const tokenStore: TokenStore
  const store: TokenStore
  const tokens: TokenManager
  const oauth: OAuthClient
  const subscriptions: WebhookSubscriptions
  // biome-ignore lint/suspicious/noExplicitAny: the options serve every framework's request type
  const oauthOptions: OAuthRoutesOptions<any>
  /** A raw request as some framework gives it. */
  const method: string
  const path: string
  const headers: Record<string, string | string[] | undefined>
  const header: string
  const body: Uint8Array
  const rawBytes: Uint8Array
  const respond: (...args: unknown[]) => void
  const request: Request
  const code: string
  const state: string
  /** The app's own classes a page names. */
  const MyTokenStore: new (db: unknown) => TokenStore
}

declare global {
  /** The app's HTTP server and its queue worker, for shutting down. */
  const server: import('node:http').Server
  const worker: import('@scheduling-kit/bullmq').BullMQWorker | undefined
}

declare global {
  /** Stores a page's reader wrote, as the conformance kits take them. */
  const MyRedisTokenStore: new (client: unknown) => TokenStore
  const MyDedupeStore: new (db: unknown, timing: unknown) => DedupeStore
  const MySubscriptionStore: new (db: unknown) => SubscriptionStore
  const MyLedgerStore: new (
    db: unknown,
    options?: { maxBodiesPerAccount?: number },
  ) => import('@scheduling-kit/core').LedgerStore
}
