import type { CredentialCipher, StoreBundle } from '@scheduling-kit/core'
import { RedisDedupeStore } from './dedupe-store.js'
import { RedisLedgerStore, type RedisLedgerStoreOptions } from './ledger-store.js'
import type { RedisStoreOptions } from './scripts.js'
import { RedisSubscriptionStore } from './subscription-store.js'
import { RedisSweepStore } from './sweep-store.js'
import { RedisTokenStore } from './token-store.js'

export interface RedisStoresOptions extends RedisStoreOptions {
  /** Seals the tokens, the webhook secrets and the bodies the ledger keeps (`createCredentialCipher`). */
  cipher?: CredentialCipher
  /** The ledger store's bound on bodies kept per account (`RedisLedgerStore`). Default 10 000. */
  maxBodiesPerAccount?: RedisLedgerStoreOptions['maxBodiesPerAccount']
}

/**
 * The token, dedupe, subscription, ledger and sweep stores on one Redis client, under one prefix and
 * one cipher: `createScheduling({ ..., stores: redisStores({ client: redis, prefix, cipher }) })`.
 */
export function redisStores(options: RedisStoresOptions): StoreBundle {
  const { cipher, maxBodiesPerAccount, ...shared } = options
  return {
    tokens: new RedisTokenStore({ ...shared, cipher }),
    dedupe: new RedisDedupeStore(shared),
    subscriptions: new RedisSubscriptionStore({ ...shared, cipher }),
    ledger: new RedisLedgerStore(
      maxBodiesPerAccount === undefined ? shared : { ...shared, maxBodiesPerAccount },
    ),
    sweeps: new RedisSweepStore(shared),
    ...(cipher === undefined ? {} : { cipher }),
  }
}
