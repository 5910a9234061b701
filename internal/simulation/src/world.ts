import {
  createWebhookSubscriptions,
  MemorySubscriptionStore,
  MemorySweepStore,
  RateCap,
  type WebhookSubscriptions,
} from '@scheduling-kit/core'
import { VirtualClock } from './clock.js'
import { EventsModel } from './events-model.js'
import { drawOf, seeded } from './random.js'
import { ServiceModel } from './service.js'
import type { SimulationOptions } from './types.js'

// The world a simulation runs: the service model with each account's webhook, the app's
// subscriptions (the real code) on a virtual clock, which accounts are active and when each
// received its last delivery, the webhooks disabled along the way.

export const DAY = 86_400_000
const URL_ = 'https://app.example.test/webhooks/scheduling'
const quiet = { debug() {}, info() {}, warn() {}, error() {} }

export interface World {
  start: number
  days: number
  clock: VirtualClock
  service: ServiceModel
  keys: string[]
  active: (key: string) => boolean
  /** When each disabled webhook was disabled. */
  disabledAt: Map<string, number>
  /** The outages: 30 minutes a day, at random. */
  outages: ReadonlyArray<{ from: number; to: number }>
  /** Each account's Events, when the run catches up. */
  events: EventsModel | undefined
  subscriptions: WebhookSubscriptions
  capPerSecond: number
  /** How long a disabled webhook of a quiet account may take: a period, two steps, an outage. */
  boundMs: number
  random: () => number
}

/** The service with every account's webhook, and the app's subscriptions over it. */
export async function buildWorld(options: SimulationOptions): Promise<World> {
  const { accounts, seed } = options
  const days = options.days ?? 2
  const random = seeded(seed)
  const start = Date.UTC(2030, 0, 1)
  const clock = new VirtualClock(start)
  const outages =
    options.outages === false
      ? []
      : Array.from({ length: days }, (_, d) => {
          // With catch-up, none in the first 6 hours: the app's first sync of every account.
          const quietStart = options.catchUp && d === 0 ? 6 * 3_600_000 : 0
          const from =
            start + d * DAY + quietStart + Math.floor(random() * (DAY - quietStart - 1_800_000))
          return { from, to: from + 1_800_000 }
        })
  const activeShare = options.activeShare ?? 0.1
  const active = (key: string) => drawOf(key, seed) < activeShare
  const events = options.catchUp
    ? new EventsModel(start, active, (key) => drawOf(key, seed ^ 0x3c6ef372))
    : undefined
  const service = new ServiceModel({
    clock,
    latencyMs: options.latencyMs ?? 75,
    capacity: options.capacity ?? 25,
    outages,
    ...(events === undefined ? {} : { events }),
  })
  const store = new MemorySubscriptionStore()
  const keys = Array.from({ length: accounts }, (_, i) => `acct_${i}`)
  for (const key of keys) {
    const webhook = service.seed(key, URL_)
    await store.compareAndSet(
      key,
      {
        active: true,
        webhooks: [{ id: webhook.id, secret: webhook.secret, url: URL_, createdAt: start }],
        updatedAt: start,
      },
      undefined,
    )
  }
  const disabledAt = new Map<string, number>()
  // A webhook delivers unless it was disabled and not made again since.
  const delivering = (key: string, t: number) => {
    const down = disabledAt.get(key)
    if (down === undefined || t < down) return true
    const made = service.createdAt.get(key)
    return made !== undefined && made > down && t >= made
  }
  const deliveries = new Deliveries(clock, delivering, options.deliveriesPerDay ?? 8, seed)
  const capPerSecond = options.capPerSecond ?? 20
  const subscriptions = createWebhookSubscriptions({
    url: URL_,
    apiUrl: 'https://api.model.test/v1',
    tokens: { getAccessToken: async (key: string) => `tok_${key}` },
    store,
    fetch: service.fetch,
    now: clock.now,
    logger: quiet,
    concurrency: options.concurrency ?? 4,
    // No retry inside the client (its backoff sleeps on the real clock): a check that fails is
    // the sweep's to try again, at its next step.
    retry: { attempts: 1 },
    rateCap: new RateCap({ perSecond: capPerSecond, now: clock.now, sleep: clock.sleep }),
    sweep: {
      store: new MemorySweepStore({ now: clock.now }),
      periodMs: DAY,
      lastDelivery: async (key) => (active(key) ? deliveries.last(key) : undefined),
    },
  })
  // Within the period, give or take two steps (or two calls, at a cadence slower than a step)
  // and an outage that held the check up.
  const tick = Math.max(DAY / 100, options.cadenceMs ?? 0)
  const boundMs = DAY + 2 * tick + (options.outages === false ? 0 : 1_800_000)
  return {
    start,
    days,
    clock,
    service,
    keys,
    active,
    disabledAt,
    outages,
    events,
    subscriptions,
    capPerSecond,
    boundMs,
    random,
  }
}

/**
 * Each active account's deliveries: a Poisson stream drawn from its key and the seed, on from a
 * day before the start; one that falls while the account's webhook is disabled is lost.
 */
class Deliveries {
  readonly #streams = new Map<
    string,
    { last: number | undefined; next: number; draw: () => number }
  >()

  constructor(
    readonly clock: VirtualClock,
    readonly delivering: (key: string, t: number) => boolean,
    readonly perDay: number,
    readonly seed: number,
  ) {}

  /** When the account last received a verified delivery, by now. */
  last(key: string): number | undefined {
    let stream = this.#streams.get(key)
    if (stream === undefined) {
      const draw = seeded(Math.floor(drawOf(key, this.seed ^ 0x5bd1e995) * 2 ** 32))
      stream = { last: undefined, next: this.clock.now() - DAY, draw }
      this.#streams.set(key, stream)
    }
    const now = this.clock.now()
    while (stream.next <= now) {
      if (this.delivering(key, stream.next)) stream.last = stream.next
      stream.next += (-Math.log(1 - stream.draw()) * DAY) / this.perDay
    }
    return stream.last
  }
}
