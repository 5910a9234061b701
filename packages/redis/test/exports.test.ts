// The exact public surface of @scheduling-kit/redis, read from the built declarations.
import { fileURLToPath } from 'node:url'
import { exportedNames } from '@scheduling-kit/conformance'
import { expect, it } from 'vitest'

const NAMES = [
  'checkEvictionPolicy',
  'EvictionPolicy',
  'RedisClient',
  'RedisDedupeStore',
  'RedisDedupeStoreOptions',
  'RedisStoreOptions',
  'RedisTokenStore',
  'RedisTokenStoreOptions',
]

it('@scheduling-kit/redis exports exactly its names', async () => {
  for (const file of ['index.d.ts', 'index.d.cts']) {
    expect(exportedNames(fileURLToPath(new URL(`../dist/${file}`, import.meta.url)))).toEqual(
      [...NAMES].sort(),
    )
  }
  expect(Object.keys(await import('../dist/index.js')).sort()).toEqual(
    ['checkEvictionPolicy', 'RedisDedupeStore', 'RedisTokenStore'].sort(),
  )
})
