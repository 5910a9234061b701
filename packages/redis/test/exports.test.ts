// The exact public surface of @scheduling-kit/redis, read from the built declarations.
import { expectExports, TYPE_CHECK_TIMEOUT_MS } from '@scheduling-kit/conformance'
import { it } from 'vitest'

const NAMES = [
  'RedisStoresOptions',
  'redisStores',
  'checkEvictionPolicy',
  'checkPersistence',
  'EvictionPolicy',
  'Persistence',
  'RedisClient',
  'RedisDedupeStore',
  'RedisDedupeStoreOptions',
  'RedisLedgerStore',
  'RedisLedgerStoreOptions',
  'RedisStoreOptions',
  'RedisSubscriptionStore',
  'RedisSweepStore',
  'RedisSubscriptionStoreOptions',
  'RedisTokenStore',
  'RedisTokenStoreOptions',
  'redisHealth',
]

it(
  '@scheduling-kit/redis exports exactly its names',
  async () => {
    await expectExports(new URL('../dist/', import.meta.url), NAMES, [
      'redisStores',
      'checkEvictionPolicy',
      'checkPersistence',
      'RedisDedupeStore',
      'RedisLedgerStore',
      'RedisSubscriptionStore',
      'RedisSweepStore',
      'RedisTokenStore',
      'redisHealth',
    ])
  },
  TYPE_CHECK_TIMEOUT_MS,
)
