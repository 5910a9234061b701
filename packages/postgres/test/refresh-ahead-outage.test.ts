import { runRefreshAheadOutage } from '@scheduling-kit/testing'
import { expect, it } from 'vitest'
import { migratedSchema } from './helpers.js'

// Refresh ahead through an outage of the token endpoint, three OS processes sharing PostgreSQL,
// two SIGKILLed at random instants while it lasts: every connection whose turn came in the
// outage is refreshed before its next turn (its failed refresh waited in the shared table, not
// in the process), and none is asked more than twice while the endpoint is down (three times
// for one a killed process had under way).

it('3 processes, the token endpoint down for 0.6 of the period, 2 of them SIGKILLed in it: every connection refreshed before its next turn, at most 2 token calls each in the outage', async () => {
  process.env.OUTAGE_SCHEMA = await migratedSchema('refresh_outage')
  const report = await runRefreshAheadOutage({
    storeModule: new URL('./fixtures/outage-stores.mjs', import.meta.url),
  })
  expect(report.problems).toEqual([])
  // The outage held up a share of the turns, each asked again after its backoff.
  const asked = Object.values(report.callsInOutage)
  expect(asked.length).toBeGreaterThan(30)
  expect(asked.filter((n) => n === 2).length).toBeGreaterThan(0)
  expect(Object.keys(report.refreshedAt)).toHaveLength(120)
}, 240_000)
