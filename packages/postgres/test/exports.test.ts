// The exact public surface of @scheduling-kit/postgres, read from the built declarations.
import { expectExports, TYPE_CHECK_TIMEOUT_MS } from '@scheduling-kit/conformance'
import { it } from 'vitest'

const NAMES = [
  'PostgresStoresOptions',
  'postgresStores',
  'MigrateOptions',
  'MigrateResult',
  'migrate',
  'PostgresDedupeStore',
  'PostgresDedupeStoreOptions',
  'PostgresLedgerStore',
  'PostgresLedgerStoreOptions',
  'PostgresPool',
  'PostgresStoreOptions',
  'PostgresSubscriptionStore',
  'PostgresSubscriptionStoreOptions',
  'PostgresSweepStore',
  'PostgresSweepStoreOptions',
  'PostgresTokenStore',
  'PostgresTokenStoreOptions',
]

it(
  '@scheduling-kit/postgres exports exactly its names',
  async () => {
    await expectExports(new URL('../dist/', import.meta.url), NAMES, [
      'postgresStores',
      'migrate',
      'PostgresDedupeStore',
      'PostgresLedgerStore',
      'PostgresSubscriptionStore',
      'PostgresSweepStore',
      'PostgresTokenStore',
    ])
  },
  TYPE_CHECK_TIMEOUT_MS,
)
