import { runConnectionScenarios } from '@scheduling-kit/testing'
import { describe, it } from 'vitest'
import { RedisSubscriptionStore, RedisTokenStore } from '../src/index.js'
import { redis, uniquePrefix } from './helpers.js'

// Every instance with its own ioredis client on one prefix, as processes share Redis: no
// instance hears another's changes but through Redis.
describe('connections on Redis', () => {
  let prefix = uniquePrefix('connections')
  runConnectionScenarios({
    describe,
    it: (name, body) =>
      it(name, async () => {
        prefix = uniquePrefix('connections')
        await body()
      }, 60_000),
    name: 'connection scenarios on RedisTokenStore and RedisSubscriptionStore',
    createStores: () => ({
      tokenStore: new RedisTokenStore({ client: redis(), prefix, logger: false }),
      subscriptionStore: new RedisSubscriptionStore({ client: redis(), prefix, logger: false }),
    }),
  })
})
