// The exact public surface of @scheduling-kit/postgres, read from the built declarations.
import { fileURLToPath } from 'node:url'
import { exportedNames } from '@scheduling-kit/conformance'
import { expect, it } from 'vitest'

const NAMES = [
  'MigrateOptions',
  'MigrateResult',
  'migrate',
  'PostgresDedupeStore',
  'PostgresDedupeStoreOptions',
  'PostgresPool',
  'PostgresStoreOptions',
  'PostgresTokenStore',
  'PostgresTokenStoreOptions',
]

it('@scheduling-kit/postgres exports exactly its names', async () => {
  for (const file of ['index.d.ts', 'index.d.cts']) {
    expect(exportedNames(fileURLToPath(new URL(`../dist/${file}`, import.meta.url)))).toEqual(
      [...NAMES].sort(),
    )
  }
  expect(Object.keys(await import('../dist/index.js')).sort()).toEqual(
    ['migrate', 'PostgresDedupeStore', 'PostgresTokenStore'].sort(),
  )
})
