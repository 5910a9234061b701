import type { CredentialCipher, SchedulingStores } from '@scheduling-kit/core'
import { RedisDedupeStore } from './dedupe-store.js'
import type { RedisStoreOptions } from './scripts.js'
import { RedisSubscriptionStore } from './subscription-store.js'
import { RedisTokenStore } from './token-store.js'

export interface RedisStoresOptions extends RedisStoreOptions {
  /** Seals the tokens and the webhook secrets (`createCredentialCipher`). */
  cipher?: CredentialCipher
}

/**
 * The token, dedupe and subscription stores on one Redis client, under one prefix and one
 * cipher: `createScheduling({ ..., stores: redisStores({ client: redis, prefix, cipher }) })`.
 */
export function redisStores(options: RedisStoresOptions): Required<SchedulingStores> {
  const { cipher, ...shared } = options
  return {
    tokens: new RedisTokenStore({ ...shared, cipher }),
    dedupe: new RedisDedupeStore(shared),
    subscriptions: new RedisSubscriptionStore({ ...shared, cipher }),
  }
}
