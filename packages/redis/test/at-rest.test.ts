import { randomBytes } from 'node:crypto'
import { runSealedStoreAttacks } from '@scheduling-kit/conformance'
import { createCredentialCipher, generateCredentialKey } from '@scheduling-kit/core'
import { runSubscriptionStoreConformance, runTokenStoreConformance } from '@scheduling-kit/testing'
import { describe, it } from 'vitest'
import { RedisSubscriptionStore, RedisTokenStore } from '../src/index.js'
import { hashTagged } from '../src/scripts.js'
import { redis, uniquePrefix } from './helpers.js'

const client = redis()
const cipher = createCredentialCipher({ keys: { k1: generateCredentialKey() }, current: 'k1' })

// Every guarantee of the stores holds over sealed records.
runTokenStoreConformance(
  () =>
    new RedisTokenStore({ client, prefix: uniquePrefix('sealed-tokens'), logger: false, cipher }),
  { describe, it, name: 'RedisTokenStore with a cipher: TokenStore conformance' },
)
const subscriptionPrefix = uniquePrefix('sealed-subscriptions')
runSubscriptionStoreConformance(
  () => new RedisSubscriptionStore({ client, prefix: subscriptionPrefix, logger: false, cipher }),
  { describe, it, name: 'RedisSubscriptionStore with a cipher: SubscriptionStore conformance' },
)

const prefix = uniquePrefix(`at-rest-${randomBytes(2).toString('hex')}`)
const recordKey = (kind: string, key: string) => `${prefix}${kind}:${hashTagged(key)}`

runSealedStoreAttacks({
  name: 'Redis',
  tokens: (cipher) => new RedisTokenStore({ client, prefix, logger: false, cipher }),
  subscriptions: (cipher) => new RedisSubscriptionStore({ client, prefix, logger: false, cipher }),
  async dump() {
    const out: string[] = []
    for (const key of await client.keys(`${prefix}*`)) {
      const type = await client.type(key)
      const value =
        type === 'hash'
          ? await client.hgetall(key)
          : type === 'string'
            ? await client.get(key)
            : type
      out.push(key, JSON.stringify(value))
    }
    return out.join('\n')
  },
  async readRaw(kind, key) {
    return (await client.hget(recordKey(kind, key), 'r')) ?? ''
  },
  async writeRaw(kind, key, value) {
    await client.hset(recordKey(kind, key), 'r', value)
  },
})
