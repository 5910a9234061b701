import type { CredentialCipher, StoreBundle } from '@scheduling-kit/core'
import { PostgresDedupeStore } from './dedupe-store.js'
import { PostgresLedgerStore, type PostgresLedgerStoreOptions } from './ledger-store.js'
import type { PostgresPool } from './sql.js'
import { PostgresSubscriptionStore } from './subscription-store.js'
import { PostgresSweepStore } from './sweep-store.js'
import { PostgresTokenStore } from './token-store.js'

export interface PostgresStoresOptions {
  pool: PostgresPool
  /** The schema of every table (`migrate(pool, { schema })` makes them). Default `public`. */
  schema?: string
  /** Seals the tokens, the webhook secrets and the bodies the ledger keeps (`createCredentialCipher`). */
  cipher?: CredentialCipher
  /** The ledger store's bound on bodies kept per account (`PostgresLedgerStore`). Default 10 000. */
  maxBodiesPerAccount?: PostgresLedgerStoreOptions['maxBodiesPerAccount']
}

/**
 * The token, dedupe, subscription, ledger and sweep stores on one pool, in one schema, with one
 * cipher: `createScheduling({ ..., stores: postgresStores({ pool, schema, cipher }) })`. Their
 * tables are made by `migrate(pool, { schema })`.
 */
export function postgresStores(options: PostgresStoresOptions): StoreBundle {
  const { pool, schema, cipher, maxBodiesPerAccount } = options
  const shared = schema === undefined ? { pool } : { pool, schema }
  return {
    tokens: new PostgresTokenStore({ ...shared, cipher }),
    dedupe: new PostgresDedupeStore(shared),
    subscriptions: new PostgresSubscriptionStore({ ...shared, cipher }),
    ledger: new PostgresLedgerStore(
      maxBodiesPerAccount === undefined ? shared : { ...shared, maxBodiesPerAccount },
    ),
    sweeps: new PostgresSweepStore(shared),
    ...(cipher === undefined ? {} : { cipher }),
  }
}
