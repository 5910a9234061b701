import assert from 'node:assert/strict'
import type { FetchLike, SubscriptionStore, TokenStore } from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './conformance-options.js'
import { type AppInstance, startAppInstance } from './connection-app.js'
import { completeOAuthFlow } from './flow.js'
import { startFakeSchedulingService } from './service.js'
import type { FakeSchedulingService, Webhook } from './service-types.js'

// The connection scenarios' world: the fake service and the app's instances, each on its own
// store objects (as each process has its own clients), and what the scenarios wait for.

export interface ConnectionScenarioOptions extends StoreConformanceOptions {
  /** A fresh pair of stores over the same data each call (a new client, same prefix or schema). */
  createStores: () =>
    | { tokenStore: TokenStore; subscriptionStore: SubscriptionStore }
    | Promise<{ tokenStore: TokenStore; subscriptionStore: SubscriptionStore }>
}

export const REVALIDATE_MS = 300
/** Past `revalidateMs`, the quarter-second step of the kept tokens' timer, and a loaded machine's timer delays. */
export const STALE_FOR_AT_MOST_MS = REVALIDATE_MS + 250 + 750
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The active webhooks of an account at the app's url. */
export const activeAt = (service: FakeSchedulingService, account: string, url: string): Webhook[] =>
  service.webhooks(account).filter((w) => w.state === 'active' && w.url.startsWith(url))

/** A scenario's world: the fake service and the app's instances, all closed at the end. */
export class World {
  readonly instances: AppInstance[] = []
  constructor(
    readonly service: FakeSchedulingService,
    readonly options: ConnectionScenarioOptions,
  ) {}

  static async start(options: ConnectionScenarioOptions): Promise<World> {
    const service = await startFakeSchedulingService({
      autoApprove: true,
      retrySchedule: [],
      deliverToEachWebhook: true,
    })
    return new World(service, options)
  }

  /** Another instance of the app, on its own stores, at the first instance's public origin. */
  async instance(more: { fetch?: FetchLike } = {}): Promise<AppInstance> {
    const stores = await this.options.createStores()
    const app = await startAppInstance({
      service: this.service,
      ...stores,
      revalidateMs: REVALIDATE_MS,
      publicOrigin: this.instances[0]?.url,
      ...more,
    })
    this.instances.push(app)
    return app
  }

  get origin(): string {
    return this.instances[0]!.url
  }

  /** Connects `account` in a browser whose app session is `uid` (the key); its cookie. */
  async connect(uid: string, account: string): Promise<string> {
    const { cookie, callback } = await completeOAuthFlow(`${this.origin}/auth/scheduling/login`, {
      account,
      cookie: `uid=${uid}`,
    })
    assert.ok(
      callback.status === 302 || callback.status === 200,
      `the callback answered ${callback.status}`,
    )
    return `uid=${uid}; ${cookie}`
  }

  async close(): Promise<void> {
    for (const app of this.instances) await app.close()
    await this.service.close()
  }
}

export async function within<T>(world: World, run: (world: World) => Promise<T>): Promise<T> {
  try {
    return await run(world)
  } finally {
    await world.close()
  }
}
