import { RecentMap } from '../recent.js'
import { isThenable } from '../thenable.js'

/** Who a webhook belongs to, as a delivery is verified. */
export interface WebhookOwner {
  /** The account's key (the token store key): handlers get it as `context.account`. */
  account: string
  /** The webhook's signing secret. */
  secret: string
  /**
   * Whether its deliveries run handlers: false once the account was removed (its late
   * deliveries are answered 200 without running anything, for the grace period).
   */
  handle: boolean
  /** When this answer stops holding (its grace period ends), ms since the epoch. */
  until?: number
}

/** The most unknown webhook ids remembered; past it, the one seen longest ago goes. */
const MAX_UNKNOWN = 10_000

/** How long an unknown webhook id is remembered as unknown, at most, in ms. */
const UNKNOWN_MS = 1_000

/**
 * Remembers each webhook id's owner for `ttlMs`, so most deliveries need no store read and no
 * promise: a hit is answered synchronously. At most `size` owners are kept, by recency: past
 * it, the webhook whose delivery came longest ago goes, so deliveries over more webhooks than
 * the bound miss only as often as the working set exceeds it. An unknown id is remembered as
 * unknown for a second at most (in a map of its own, bounded: a flood of made-up ids neither
 * pushes owners out nor reads the store for every repeat), and this process's own changes
 * forget the ids they touch at once.
 */
export class OwnerCache {
  readonly #ttl: number
  readonly #now: () => number
  readonly #entries: RecentMap<string, { owner: WebhookOwner; until: number }>
  readonly #unknown = new RecentMap<string, number>(MAX_UNKNOWN)

  constructor(ttlMs: number, now: () => number = Date.now, size = 100_000) {
    this.#ttl = ttlMs
    this.#now = now
    this.#entries = new RecentMap(size)
  }

  lookup(
    webhookId: string,
    load: () => Promise<WebhookOwner | undefined>,
  ): WebhookOwner | undefined | Promise<WebhookOwner | undefined> {
    const hit = this.#entries.get(webhookId)
    if (hit !== undefined) {
      if (hit.until > this.#now()) return hit.owner
      this.#entries.delete(webhookId)
    }
    const unknownUntil = this.#unknown.get(webhookId)
    if (unknownUntil !== undefined) {
      if (unknownUntil > this.#now()) return undefined
      this.#unknown.delete(webhookId)
    }
    const loaded = load()
    if (this.#ttl === 0 || !isThenable(loaded)) return loaded
    return loaded.then((owner) => {
      if (owner === undefined) {
        this.#unknown.set(webhookId, this.#now() + Math.min(this.#ttl, UNKNOWN_MS))
        return owner
      }
      this.#entries.set(webhookId, {
        owner,
        until: Math.min(this.#now() + this.#ttl, owner.until ?? Number.POSITIVE_INFINITY),
      })
      return owner
    })
  }

  forget(webhookId: string): void {
    this.#entries.delete(webhookId)
    this.#unknown.delete(webhookId)
  }
}
