// The queue and worker on their own: bad options, one job per delivery, the database
// unreachable at boot, health, and migrate.
import { ownPostgres } from '@scheduling-kit/conformance'
import { ConfigError, createWebhookHandler, isWebhookError } from '@scheduling-kit/core'
import { createTestEvent, signedRequest } from '@scheduling-kit/testing'
import fc from 'fast-check'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { checkNode } from '../src/boss.js'
import { createPostgresQueue, createPostgresWorker, jobIdFor, migrate } from '../src/index.js'
import { freshSchema, newPool, quiet } from './helpers.js'

const SECRET = 'whsec_pgq'
const pool = newPool()
afterAll(() => pool.end())

const deliver = async (handler: ReturnType<typeof createWebhookHandler>, id: string) => {
  const { body, headers } = await signedRequest(
    createTestEvent('event.created', { id: id as `payload_${string}` }),
    { secret: SECRET },
  )
  return (await handler.handle({ method: 'POST', path: '/webhooks/scheduling', headers, body }))!
    .status
}

describe('options', () => {
  it('refuses what cannot work, saying which option', () => {
    const cases: [() => unknown, RegExp][] = [
      [() => createPostgresQueue({} as never), /pool must be a pg Pool/],
      [() => createPostgresQueue({ pool, queueName: 'a:b' }), /queueName/],
      [() => createPostgresQueue({ pool, queueName: '' }), /queueName/],
      [() => createPostgresQueue({ pool, schema: 'Bad-Schema' }), /schema/],
      [() => createPostgresQueue({ pool, heartbeatSeconds: 5 }), /heartbeatSeconds/],
      [() => createPostgresQueue({ pool, batchSize: 0 }), /batchSize/],
      [() => createPostgresQueue({ pool, attempts: 1.5 }), /attempts/],
      [() => createPostgresWorker({ pool } as never), /handler with dispatch\(\)/],
      [
        () => createPostgresWorker({ pool, handler: createWebhookHandler(SECRET), pollMs: 100 }),
        /pollMs/,
      ],
    ]
    for (const [make, message] of cases) {
      expect(make).toThrow(ConfigError)
      expect(make).toThrow(message)
    }
  })

  it('on a Node.js below 22.12, the queue and the worker throw at once, naming both versions', () => {
    for (const old of ['20.20.2', '22.11.0', '18.0.0'])
      expect(() => checkNode('createPostgresQueue', old)).toThrow(
        `createPostgresQueue: needs Node.js 22.12.0 or later (pg-boss 12 does); this is Node.js ${old}.`,
      )
    for (const fine of ['22.12.0', '22.20.1', '24.0.0']) checkNode('createPostgresQueue', fine)
  })

  it('job ids: one UUID per delivery key, the same every time, two keys never one', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        expect(jobIdFor(a)).toMatch(
          /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/,
        )
        expect(jobIdFor(a)).toBe(jobIdFor(a))
        if (a !== b) expect(jobIdFor(a)).not.toBe(jobIdFor(b))
      }),
    )
    // Lone surrogates are not folded together (a plain UTF-8 encoding would map both to U+FFFD).
    expect(jobIdFor('\uD800')).not.toBe(jobIdFor('\uDC00'))
  })
})

it('one delivery enqueued many times at once, in one group and across groups: one job, run once', async () => {
  const schema = freshSchema()
  const queue = createPostgresQueue({ pool, schema, logger: quiet })
  const runs: string[] = []
  const handler = createWebhookHandler(SECRET, { queue, logger: quiet }).on(
    'event.created',
    (event) => void runs.push(event.id),
  )
  try {
    await queue.ready()
    // Straight to the queue: the handler itself answers a copy in flight 409 (its dedupe).
    // Each enqueue resolves: the copies in one group, and in the groups after, are one job.
    await Promise.all(
      Array.from({ length: 30 }, (_, n) => {
        const id = `payload_same${n % 3}` as const
        return queue.enqueue(
          createTestEvent('event.created', { id }),
          { webhookId: undefined, secretIndex: 0, headers: {} } as never,
          { key: id },
        )
      }),
    )
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM ${schema}.job WHERE name = $1`,
      ['scheduling-webhooks'],
    )
    expect(rows[0].n).toBe(3)
    const worker = createPostgresWorker({ handler, pool, schema, logger: quiet, concurrency: 4 })
    try {
      await vi.waitFor(
        () => expect(runs.sort()).toEqual(['payload_same0', 'payload_same1', 'payload_same2']),
        {
          timeout: 20_000,
        },
      )
      await new Promise((r) => setTimeout(r, 1_000))
      expect(runs).toHaveLength(3)
    } finally {
      await worker.close()
    }
  } finally {
    await queue.close()
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  }
})

it('a queue just made takes deliveries before ready(): 60 sent at once while it starts (its schema made then) are all answered 200, one job each', async () => {
  const schema = freshSchema()
  const queue = createPostgresQueue({ pool, schema, logger: quiet })
  const handler = createWebhookHandler(SECRET, { queue, logger: quiet }).on(
    'event.created',
    () => {},
  )
  try {
    // Not awaited: the first start (installing pg-boss's tables) is under way as they arrive.
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, n) => deliver(handler, `payload_early${n}`)),
    )
    expect(statuses.filter((s) => s !== 200)).toEqual([])
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM ${schema}.job WHERE name = $1`,
      ['scheduling-webhooks'],
    )
    expect(rows[0].n).toBe(60)
  } finally {
    await queue.close()
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  }
})

it('PostgreSQL unreachable at boot: 503 at once meanwhile, then the queue and worker start on their own and run what is sent again', async () => {
  const server = await ownPostgres({ started: false })
  const down = newPool(server.url)
  const warnings: string[] = []
  // A wait for the start would outlast this test (its time-out catches it): the 503 comes at once.
  const queue = createPostgresQueue({
    pool: down,
    timeoutMs: 3_600_000,
    logger: { warn: (m) => void warnings.push(m) },
  })
  const runs: string[] = []
  const handler = createWebhookHandler(SECRET, { queue, logger: quiet }).on(
    'event.created',
    (event) => void runs.push(event.id),
  )
  const worker = createPostgresWorker({ handler, pool: down, logger: quiet })
  try {
    expect(await deliver(handler, 'payload_boot')).toBe(503)
    expect((await queue.health()).ok).toBe(false)
    await vi.waitFor(() => expect(warnings.join()).toMatch(/could not start yet/), {
      timeout: 10_000,
    })
    expect(warnings.join()).not.toMatch(/password|postgres:\/\//)
    server.start()
    await Promise.all([queue.ready(), worker.ready()])
    expect((await queue.health()).ok).toBe(true)
    expect((await worker.health()).ok).toBe(true)
    expect(await deliver(handler, 'payload_boot')).toBe(200)
    await vi.waitFor(() => expect(runs).toEqual(['payload_boot']), { timeout: 20_000 })
  } finally {
    await worker.close()
    await queue.close()
    await down.end()
    server.stop()
  }
})

it('closed: refused with a 503 and a health that says so; migrate() sets up once, from many pools at once', async () => {
  const schema = freshSchema()
  const pools = Array.from({ length: 4 }, () => newPool(undefined, 2))
  try {
    await Promise.all(pools.map((p) => migrate(p, { schema })))
    const { rows } = await pool.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('job', 'queue', 'scheduling_kit_dedupe') ORDER BY 1`,
      [schema],
    )
    expect(rows.map((r) => r.table_name)).toEqual(['job', 'queue', 'scheduling_kit_dedupe'])
    const queue = createPostgresQueue({ pool, schema, migrate: false, logger: quiet })
    await queue.ready()
    await queue.close()
    const handler = createWebhookHandler(SECRET, { queue, logger: quiet })
    expect(await deliver(handler, 'payload_closed')).toBe(503)
    const health = await queue.health()
    expect(health.checks.find((c) => c.name === 'queue')).toMatchObject({ ok: false })
    await expect(
      queue.enqueue(
        createTestEvent('event.created'),
        { webhookId: undefined, secretIndex: 0, headers: {} } as never,
        { key: 'payload_closed' },
      ),
    ).rejects.toThrow(/closed/)
  } finally {
    await Promise.all(pools.map((p) => p.end()))
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  }
})

it('a failing handler: its error is the job’s failure, told with the attempt, never the HTTP wording', async () => {
  const schema = freshSchema()
  const queue = createPostgresQueue({ pool, schema, attempts: 2, backoffMs: 1_000, logger: quiet })
  const warned: string[] = []
  const handler = createWebhookHandler(SECRET, { queue, logger: quiet }).on('event.created', () => {
    throw new Error('the booking table is locked')
  })
  const worker = createPostgresWorker({
    handler,
    pool,
    schema,
    // Only the jobs' failures: a worker that starts before the app made the queue also says
    // it could not start yet.
    logger: { warn: (m) => void (/failed on attempt/.test(m) && warned.push(m)), error: () => {} },
  })
  try {
    await Promise.all([queue.ready(), worker.ready()])
    expect(await deliver(handler, 'payload_fails')).toBe(200)
    await vi.waitFor(() => expect(warned).toHaveLength(2), { timeout: 30_000 })
    expect(warned[0]).toMatch(
      /payload_fails\) failed on attempt 1 of 2: the booking table is locked/,
    )
    expect(warned[1]).toMatch(/attempt 2 of 2/)
    // The failure is told before pg-boss records it: wait for the record.
    const failed = async () => (await pool.query(`SELECT state, output FROM ${schema}.job`)).rows
    await vi.waitFor(async () => expect(await failed()).toMatchObject([{ state: 'failed' }]), {
      timeout: 20_000,
    })
    const rows = await failed()
    expect(JSON.stringify(rows[0].output)).toMatch(/the booking table is locked/)
    expect(isWebhookError(rows[0].output)).toBe(false)
  } finally {
    await worker.close()
    await queue.close()
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  }
})
