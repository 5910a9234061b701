// redisStores: the three stores on one client, under one prefix typed once, sealed with one
// cipher: every key any of them writes is under the prefix, and no token or webhook secret is
// stored in plaintext.
import { createCredentialCipher, generateCredentialKey } from '@scheduling-kit/core'
import { describe, expect, it } from 'vitest'
import { redisStores } from '../src/index.js'
import { redis, uniquePrefix } from './helpers.js'

const cipher = createCredentialCipher({ keys: { k1: generateCredentialKey() }, current: 'k1' })

describe('redisStores', () => {
  it('writes every store under the one prefix, with tokens and secrets sealed', async () => {
    const client = redis()
    const prefix = uniquePrefix('bundle')
    const stores = redisStores({ client, prefix, cipher, logger: false })
    await stores.tokens.set('user_1', {
      accessToken: 'at_PLAINTEXT_ACCESS',
      refreshToken: 'rt_PLAINTEXT_REFRESH',
      tokenType: 'Bearer',
      expiresAt: Date.now() + 3_600_000,
    })
    expect(await stores.dedupe.claim('payload_1', 'owner_1')).toBe('claimed')
    await stores.subscriptions.compareAndSet(
      'user_1',
      {
        active: true,
        updatedAt: Date.now(),
        webhooks: [
          {
            id: 'wh_1',
            url: 'https://app.example.com/webhooks/scheduling',
            secret: 'whsec_PLAINTEXT_SECRET',
            createdAt: Date.now(),
          },
        ],
      },
      undefined,
    )
    const keys = await client.keys(`${prefix}*`)
    // One or more keys of each store, all under the prefix.
    expect(keys.length).toBeGreaterThanOrEqual(3)
    const everything = await client.keys('*')
    const mine = everything.filter((k) => k.includes(prefix.slice(0, -1)))
    expect(mine.every((k) => k.startsWith(prefix))).toBe(true)
    const dump = JSON.stringify(
      await Promise.all(
        keys.map(async (k) =>
          (await client.type(k)) === 'hash' ? client.hgetall(k) : client.get(k).catch(() => ''),
        ),
      ),
    )
    for (const secret of ['at_PLAINTEXT_ACCESS', 'rt_PLAINTEXT_REFRESH', 'whsec_PLAINTEXT_SECRET'])
      expect(dump).not.toContain(secret)
    // And read back through the stores, opened.
    expect((await stores.tokens.get('user_1'))?.accessToken).toBe('at_PLAINTEXT_ACCESS')
    expect((await stores.subscriptions.get('user_1'))?.webhooks[0]?.secret).toBe(
      'whsec_PLAINTEXT_SECRET',
    )
  })
})
