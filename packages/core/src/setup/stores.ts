import { type DedupeStore, MemoryDedupeStore } from '../claims/dedupe.js'
import type { CredentialCipher } from '../credentials/types.js'
import { MemoryLedgerStore } from '../ledger/memory.js'
import type { LedgerStore } from '../ledger/store.js'
import { MemorySubscriptionStore, type SubscriptionStore } from '../subscriptions/store.js'
import { MemorySweepStore, type SweepStore } from '../sweep/store.js'
import { MemoryTokenStore, type TokenStore } from '../tokens/store.js'

/**
 * The stores an app keeps its state in, given once: tokens, the payload ids of handled
 * deliveries, each account's webhook and the delivery ledger. `redisStores(...)` and
 * `postgresStores(...)` (in their packages) make all four with one prefix or schema and one
 * cipher.
 */
export interface SchedulingStores {
  tokens: TokenStore
  /** Default: an in-memory store (one process). */
  dedupe?: DedupeStore
  /** Needed with `webhookUrl`; default: an in-memory store (one process). */
  subscriptions?: SubscriptionStore
  /** Where `createScheduling({ ledger })` records deliveries; default: an in-memory store (one process). */
  ledger?: LedgerStore
  /** The shards of `createScheduling({ sweep })`; default: an in-memory store (one process). */
  sweeps?: SweepStore
  /**
   * What the bundle seals credentials with: `createScheduling({ ledger })` seals the bodies it
   * keeps for replay with it too, unless its options name a cipher of their own.
   */
  cipher?: CredentialCipher
}

/** What a store bundle makes: every store, and the cipher when it was given one. */
export type StoreBundle = Required<Omit<SchedulingStores, 'cipher'>> &
  Pick<SchedulingStores, 'cipher'>

/** Every store in memory: for one process, a test, or a first try. */
export function memoryStores(): StoreBundle {
  return {
    tokens: new MemoryTokenStore(),
    dedupe: new MemoryDedupeStore(),
    subscriptions: new MemorySubscriptionStore(),
    ledger: new MemoryLedgerStore(),
    sweeps: new MemorySweepStore(),
  }
}
