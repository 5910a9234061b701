import { runConnectionScenarios } from '@scheduling-kit/testing'
import { describe, it } from 'vitest'
import { PostgresSubscriptionStore, PostgresTokenStore } from '../src/index.js'
import { migratedSchema, pool } from './helpers.js'

// Every instance with its own pool on one schema, as processes share the database: no
// instance hears another's changes but through PostgreSQL.
describe('connections on PostgreSQL', () => {
  let schema = ''
  runConnectionScenarios({
    describe,
    it: (name, body) =>
      it(name, async () => {
        schema = await migratedSchema('connections')
        await body()
      }, 60_000),
    name: 'connection scenarios on PostgresTokenStore and PostgresSubscriptionStore',
    createStores: () => {
      const own = pool(4)
      return {
        tokenStore: new PostgresTokenStore({ pool: own, schema }),
        subscriptionStore: new PostgresSubscriptionStore({ pool: own, schema }),
      }
    },
  })
})
