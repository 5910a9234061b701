// The queue behind pgbouncer in transaction mode (each statement may run on another server
// connection: no session state survives): the whole queue battery passes through it.
import { type LocalBouncer, startPgbouncer } from '@scheduling-kit/conformance'
import { runWebhookQueueConformance } from '@scheduling-kit/testing'
import type pg from 'pg'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { DATABASE_URL, newPool, queueKit } from './helpers.js'

let bouncer: LocalBouncer
let pool: pg.Pool
beforeAll(async () => {
  bouncer = await startPgbouncer(DATABASE_URL)
  pool = newPool(bouncer.url)
}, 180_000)
afterAll(async () => {
  await pool?.end()
  await bouncer?.stop()
})

runWebhookQueueConformance(
  queueKit(() => pool),
  {
    describe,
    it,
    name: 'createPostgresQueue behind pgbouncer (transaction mode): WebhookQueue conformance',
  },
)
