export { PostgresDedupeStore, type PostgresDedupeStoreOptions } from './dedupe-store.js'
export { PostgresLedgerStore, type PostgresLedgerStoreOptions } from './ledger-store.js'
export { type MigrateOptions, type MigrateResult, migrate } from './migrate.js'
export type { PostgresPool, PostgresStoreOptions } from './sql.js'
export { type PostgresStoresOptions, postgresStores } from './stores.js'
export {
  PostgresSubscriptionStore,
  type PostgresSubscriptionStoreOptions,
} from './subscription-store.js'
export { PostgresSweepStore, type PostgresSweepStoreOptions } from './sweep-store.js'
export { PostgresTokenStore, type PostgresTokenStoreOptions } from './token-store.js'
