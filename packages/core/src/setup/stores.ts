import { type DedupeStore, MemoryDedupeStore } from '../claims/dedupe.js'
import { MemorySubscriptionStore, type SubscriptionStore } from '../subscriptions/store.js'
import { MemoryTokenStore, type TokenStore } from '../tokens/store.js'

/**
 * The stores an app keeps its state in, given once: tokens, the payload ids of handled
 * deliveries, and each account's webhook. `redisStores(...)` and `postgresStores(...)` (in their
 * packages) make all three with one prefix or schema and one cipher.
 */
export interface SchedulingStores {
  tokens: TokenStore
  /** Default: an in-memory store (one process). */
  dedupe?: DedupeStore
  /** Needed with `webhookUrl`; default: an in-memory store (one process). */
  subscriptions?: SubscriptionStore
}

/** All three stores in memory: for one process, a test, or a first try. */
export function memoryStores(): Required<SchedulingStores> {
  return {
    tokens: new MemoryTokenStore(),
    dedupe: new MemoryDedupeStore(),
    subscriptions: new MemorySubscriptionStore(),
  }
}
