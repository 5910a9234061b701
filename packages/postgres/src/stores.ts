import type { CredentialCipher, SchedulingStores } from '@scheduling-kit/core'
import { PostgresDedupeStore } from './dedupe-store.js'
import type { PostgresPool } from './sql.js'
import { PostgresSubscriptionStore } from './subscription-store.js'
import { PostgresTokenStore } from './token-store.js'

export interface PostgresStoresOptions {
  pool: PostgresPool
  /** The schema of every table (`migrate(pool, { schema })` makes them). Default `public`. */
  schema?: string
  /** Seals the tokens and the webhook secrets (`createCredentialCipher`). */
  cipher?: CredentialCipher
}

/**
 * The token, dedupe and subscription stores on one pool, in one schema, with one cipher:
 * `createScheduling({ ..., stores: postgresStores({ pool, schema, cipher }) })`. Their tables
 * are made by `migrate(pool, { schema })`.
 */
export function postgresStores(options: PostgresStoresOptions): Required<SchedulingStores> {
  const { pool, schema, cipher } = options
  const shared = schema === undefined ? { pool } : { pool, schema }
  return {
    tokens: new PostgresTokenStore({ ...shared, cipher }),
    dedupe: new PostgresDedupeStore(shared),
    subscriptions: new PostgresSubscriptionStore({ ...shared, cipher }),
  }
}
