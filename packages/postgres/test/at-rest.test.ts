import { runSealedStoreAttacks } from '@scheduling-kit/conformance'
import { createCredentialCipher, generateCredentialKey } from '@scheduling-kit/core'
import { runSubscriptionStoreConformance, runTokenStoreConformance } from '@scheduling-kit/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { PostgresLedgerStore, PostgresSubscriptionStore, PostgresTokenStore } from '../src/index.js'
import { rowKey } from '../src/sql.js'
import { migratedSchema, pool } from './helpers.js'

const shared = pool()
let schema: string
beforeAll(async () => {
  schema = await migratedSchema('at_rest', shared)
})
const cipher = createCredentialCipher({ keys: { k1: generateCredentialKey() }, current: 'k1' })

// Every guarantee of the stores holds over sealed records.
runTokenStoreConformance(() => new PostgresTokenStore({ pool: shared, schema, cipher }), {
  describe,
  it,
  name: 'PostgresTokenStore with a cipher: TokenStore conformance',
})
runSubscriptionStoreConformance(
  () => new PostgresSubscriptionStore({ pool: shared, schema, cipher }),
  { describe, it, name: 'PostgresSubscriptionStore with a cipher: SubscriptionStore conformance' },
)

const table = (kind: 'token' | 'subscription') =>
  `"${schema}".${kind === 'token' ? 'scheduling_kit_tokens' : 'scheduling_kit_subscriptions'}`

runSealedStoreAttacks({
  name: 'PostgreSQL',
  tokens: (cipher) => new PostgresTokenStore({ pool: shared, schema, cipher }),
  subscriptions: (cipher) => new PostgresSubscriptionStore({ pool: shared, schema, cipher }),
  async dump() {
    const out: string[] = []
    for (const kind of ['token', 'subscription'] as const) {
      const { rows } = await shared.query(`SELECT t::text AS row FROM ${table(kind)} t`)
      out.push(...rows.map((r) => r.row as string))
    }
    return out.join('\n')
  },
  async readRaw(kind, key) {
    const { rows } = await shared.query(
      `SELECT record #>> '{}' AS raw FROM ${table(kind)} WHERE key = $1`,
      [rowKey(key)],
    )
    return rows[0]?.raw ?? ''
  },
  async writeRaw(kind, key, value) {
    await shared.query(
      `UPDATE ${table(kind)} SET record = CASE WHEN left($2, 1) = '{' THEN $2::jsonb ELSE to_jsonb($2::text) END WHERE key = $1`,
      [rowKey(key), value],
    )
  },
})

it('PostgresLedgerStore refuses a cipher (the ledger seals the bodies): taken and ignored, it would store them in plain text', () => {
  expect(
    () =>
      new PostgresLedgerStore({ pool: pool(), cipher } as ConstructorParameters<
        typeof PostgresLedgerStore
      >[0]),
  ).toThrow(/cipher is not an option of the store: give it to createDeliveryLedger/)
})
