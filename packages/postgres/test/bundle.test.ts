// postgresStores: the four stores on one pool, in one schema typed once, sealed with one
// cipher: every row any of them writes is in that schema, and no token, webhook secret or
// delivery body is stored in plaintext.
import { serveScheduling } from '@scheduling-kit/conformance'
import {
  createCredentialCipher,
  createScheduling,
  generateCredentialKey,
} from '@scheduling-kit/core'
import { createTestEvent, sendTestEvent } from '@scheduling-kit/testing'
import { describe, expect, it } from 'vitest'
import { postgresStores } from '../src/index.js'
import { migratedSchema, pool } from './helpers.js'

const cipher = createCredentialCipher({ keys: { k1: generateCredentialKey() }, current: 'k1' })

describe('postgresStores', () => {
  it('writes every store in the one schema, with tokens and secrets sealed', async () => {
    const db = pool()
    const schema = await migratedSchema('bundle', db)
    const stores = postgresStores({ pool: db, schema, cipher })
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
    // The ledger: createScheduling records each delivery in the bundle's ledger store, its body
    // sealed with the bundle's cipher.
    const scheduling = createScheduling({
      clientId: 'c',
      clientSecret: 's',
      redirectUri: 'https://app.example.com/auth/scheduling/callback',
      authUrl: 'https://auth.example.com',
      apiUrl: 'https://api.example.com/v1',
      secret: 'whsec_bundle',
      stores,
      ledger: true,
    })
    const seen: unknown[] = []
    scheduling.webhooks.onAny(
      (e) => void seen.push((e.payload as { description?: unknown }).description),
    )
    const event = createTestEvent('event.created', {
      payload: { description: 'PLAINTEXT_BOOKING_NOTE' },
    })
    const app = await serveScheduling(scheduling)
    try {
      expect((await sendTestEvent(app.url, event, { secret: 'whsec_bundle' })).status).toBe(200)
    } finally {
      await app.close()
    }
    expect(await scheduling.ledger?.get(event.id)).toMatchObject({ status: 'done' })

    const { rows } = await db.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`,
      [schema],
    )
    const dump: unknown[] = []
    for (const { table_name } of rows as Array<{ table_name: string }>) {
      const found = await db.query(`SELECT t::text AS row FROM "${schema}"."${table_name}" t`)
      dump.push(...found.rows)
    }
    const text = JSON.stringify(dump)
    // Each store wrote its row there.
    for (const written of ['user_1', 'payload_1', 'wh_1', event.id]) expect(text).toContain(written)
    for (const secret of [
      'at_PLAINTEXT_ACCESS',
      'rt_PLAINTEXT_REFRESH',
      'whsec_PLAINTEXT_SECRET',
      'PLAINTEXT_BOOKING_NOTE',
    ])
      expect(text).not.toContain(secret)
    // The body is there to replay, opened with the same cipher.
    expect(await scheduling.webhooks.replay(event.id, { again: true })).toMatchObject({
      replayed: 1,
    })
    expect(seen).toEqual(['PLAINTEXT_BOOKING_NOTE', 'PLAINTEXT_BOOKING_NOTE'])
    expect((await stores.tokens.get('user_1'))?.accessToken).toBe('at_PLAINTEXT_ACCESS')
    expect((await stores.subscriptions.get('user_1'))?.webhooks[0]?.secret).toBe(
      'whsec_PLAINTEXT_SECRET',
    )
  })
})
