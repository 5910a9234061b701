import {
  createWebhookSubscriptions,
  MemorySubscriptionStore,
  MemorySweepStore,
  RateCap,
} from '@scheduling-kit/core'
import { VirtualClock } from './clock.js'
import { drawOf, seeded } from './random.js'
import { ServiceModel } from './service.js'

// A day (or more) of an app with many connected accounts, on a virtual clock, seeded: the real
// subscriptions sweep, rate cap and repair code against the service model. A share of the
// accounts is active (deliveries at random, several a day); webhooks are disabled at random
// times; the service has a latency, a capacity past which it answers 429 and an outage a day.

const DAY = 86_400_000
const URL_ = 'https://app.example.test/webhooks/scheduling'
const quiet = { debug() {}, info() {}, warn() {}, error() {} }

export interface SimulationOptions {
  accounts: number
  seed: number
  /**
   * Days simulated. Default 2. Webhooks are disabled early enough for their repair to be judged
   * within the run: before its end less a period, two steps and an outage.
   */
  days?: number
  /** Share of the accounts that receive deliveries, each `deliveriesPerDay` on average. */
  activeShare?: number
  deliveriesPerDay?: number
  /** Webhooks the service disables at random times. Default a thousandth of the accounts. */
  disables?: number
  /** The app's cap and the service's capacity, in requests a second; its latency in ms. */
  capPerSecond?: number
  capacity?: number
  latencyMs?: number
  /** Outages of 30 minutes, one a day at a random time. Default true. */
  outages?: boolean
  /** Accounts a step checks at once. Default 4. */
  concurrency?: number
}

export interface SimulationReport {
  accounts: number
  days: number
  requests: { list: number; create: number; delete: number; throttled: number; unavailable: number }
  /** List requests a day, per account that received deliveries, and per one that did not. */
  listsPerActiveAccountPerDay: number
  listsPerQuietAccountPerDay: number
  /** Webhooks disabled, and how long each took to be made again, in ms (of those repaired). */
  disabled: number
  repaired: number
  repairMs: { p50: number; p99: number; max: number }
  /**
   * Of the disabled, those of quiet accounts repaired within one period, and within a period
   * and the time a check can be held up: two steps and an outage (a check that fails is tried
   * again at the next step).
   */
  quietRepairedWithinPeriod: number
  quietRepairedWithinBound: number
  quietDisabled: number
  boundMs: number
  peakPerSecond: number
  capPerSecond: number
  /** Checks that failed (an outage, 429s past the client's retries), and steps run. */
  failedChecks: number
  steps: number
  heapBytesPerAccount: number
  wallMs: number
}

export async function runSimulation(options: SimulationOptions): Promise<SimulationReport> {
  // The code under test draws with Math.random (a step's first shard, the client's backoff
  // jitter): seeded for the run, so that the same seed gives the same run.
  const random = Math.random
  Math.random = seeded(options.seed ^ 0x2545f491)
  try {
    return await simulate(options)
  } finally {
    Math.random = random
  }
}

async function simulate(options: SimulationOptions): Promise<SimulationReport> {
  const started = performance.now()
  ;(globalThis as { gc?: () => void }).gc?.()
  const heapBefore = process.memoryUsage().heapUsed
  const { accounts, seed } = options
  const days = options.days ?? 2
  const activeShare = options.activeShare ?? 0.1
  const perDay = options.deliveriesPerDay ?? 8
  const capPerSecond = options.capPerSecond ?? 20
  const random = seeded(seed)
  const start = Date.UTC(2030, 0, 1)
  const clock = new VirtualClock(start)
  const outages =
    options.outages === false
      ? []
      : Array.from({ length: days }, (_, d) => {
          const from = start + d * DAY + Math.floor(random() * (DAY - 1_800_000))
          return { from, to: from + 1_800_000 }
        })
  const service = new ServiceModel({
    clock,
    latencyMs: options.latencyMs ?? 75,
    capacity: options.capacity ?? 25,
    outages,
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
  const active = (key: string) => drawOf(key, seed) < activeShare
  const disabledAt = new Map<string, number>()
  // A webhook delivers unless it was disabled and not made again since.
  const delivering = (key: string, t: number) => {
    const down = disabledAt.get(key)
    if (down === undefined || t < down) return true
    const made = service.createdAt.get(key)
    return made !== undefined && made > down && t >= made
  }
  const deliveries = new Deliveries(clock, delivering, perDay, seed)
  const rateCap = new RateCap({ perSecond: capPerSecond, now: clock.now, sleep: clock.sleep })
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
    rateCap,
    sweep: {
      store: new MemorySweepStore({ now: clock.now }),
      periodMs: DAY,
      lastDelivery: async (key) => (active(key) ? deliveries.last(key) : undefined),
    },
  })
  // Disables, each of a random account at a random time, early enough to be judged.
  const boundMs = DAY + (2 * DAY) / 100 + (options.outages === false ? 0 : 1_800_000)
  const disableWindow = Math.max(0, days * DAY - boundMs)
  const disables =
    disableWindow === 0 ? 0 : (options.disables ?? Math.max(1, Math.round(accounts / 1000)))
  for (let i = 0; i < disables; i++) {
    const key = keys[Math.floor(random() * accounts)]!
    clock.at(start + Math.floor(random() * disableWindow), () => {
      if (!disabledAt.has(key) && service.disable(key)) disabledAt.set(key, clock.now())
    })
  }
  // A step every hundredth of the day, as a timer each instance would run.
  let steps = 0
  let failedChecks = 0
  const sweeps: Promise<void>[] = []
  for (let t = start; t <= start + days * DAY; t += DAY / 100)
    clock.at(t, () => {
      sweeps.push(
        subscriptions.sweep().then((report) => {
          steps++
          failedChecks += report.failed.length
        }),
      )
    })
  await clock.runUntil(start + days * DAY + DAY / 100)
  await Promise.all(sweeps)
  ;(globalThis as { gc?: () => void }).gc?.()
  const heapBytesPerAccount = (process.memoryUsage().heapUsed - heapBefore) / accounts

  const activeKeys = keys.filter(active)
  const listsOf = (list: string[]) => list.reduce((n, k) => n + (service.listsOf.get(k) ?? 0), 0)
  const repairTimes: number[] = []
  let quietDisabled = 0
  let quietRepairedWithinPeriod = 0
  let quietRepairedWithinBound = 0
  for (const [key, at] of disabledAt) {
    const made = service.createdAt.get(key)
    const took = made === undefined || made < at ? undefined : made - at
    if (took !== undefined) repairTimes.push(took)
    if (!active(key)) {
      quietDisabled++
      if (took !== undefined && took <= DAY) quietRepairedWithinPeriod++
      if (took !== undefined && took <= boundMs) quietRepairedWithinBound++
    }
  }
  repairTimes.sort((a, b) => a - b)
  const at = (q: number) =>
    repairTimes[Math.min(repairTimes.length - 1, Math.floor(q * repairTimes.length))] ?? 0
  return {
    accounts,
    days,
    requests: { ...service.counts },
    listsPerActiveAccountPerDay: listsOf(activeKeys) / Math.max(1, activeKeys.length) / days,
    listsPerQuietAccountPerDay:
      (listsOf(keys) - listsOf(activeKeys)) / Math.max(1, accounts - activeKeys.length) / days,
    disabled: disabledAt.size,
    repaired: repairTimes.length,
    repairMs: { p50: at(0.5), p99: at(0.99), max: repairTimes.at(-1) ?? 0 },
    quietRepairedWithinPeriod,
    quietRepairedWithinBound,
    quietDisabled,
    boundMs,
    peakPerSecond: service.peakPerSecond,
    capPerSecond,
    failedChecks,
    steps,
    heapBytesPerAccount,
    wallMs: Math.round(performance.now() - started),
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
