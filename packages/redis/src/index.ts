export { RedisDedupeStore, type RedisDedupeStoreOptions } from './dedupe-store.js'
export {
  checkEvictionPolicy,
  checkPersistence,
  type EvictionPolicy,
  type Persistence,
} from './eviction.js'
export { redisHealth } from './health.js'
export { RedisLedgerStore, type RedisLedgerStoreOptions } from './ledger-store.js'
export type { RedisClient, RedisStoreOptions } from './scripts.js'
export { type RedisStoresOptions, redisStores } from './stores.js'
export {
  RedisSubscriptionStore,
  type RedisSubscriptionStoreOptions,
} from './subscription-store.js'
export { RedisSweepStore } from './sweep-store.js'
export { RedisTokenStore, type RedisTokenStoreOptions } from './token-store.js'
