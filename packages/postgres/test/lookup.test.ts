import { expect, it } from 'vitest'
import { migrate, PostgresSubscriptionStore } from '../src/index.js'
import { migratedSchema, pool } from './helpers.js'

// A delivery's lookup by webhook id, at 100,000 accounts: one probe of the index's primary key,
// for a known id and an unknown one alike (checked with EXPLAIN on the store's own statement,
// on a table never analysed: this database runs without autovacuum).
const ACCOUNTS = 100_000

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  Plans?: PlanNode[]
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)]

async function fill(schema: string, p: ReturnType<typeof pool>): Promise<void> {
  const t = `"${schema}".scheduling_kit_subscriptions`
  await p.query(
    `INSERT INTO ${t} (key, account, record, webhook_ids, version)
     SELECT 'acct_' || i, 'acct_' || i,
       jsonb_build_object('active', true, 'updatedAt', 0, 'webhooks', jsonb_build_array(
         jsonb_build_object('id', 'wh_' || i, 'secret', 's_' || i, 'url', 'https://a.test/h', 'createdAt', 0))),
       ARRAY['wh_' || i], 1
     FROM generate_series(1, ${ACCOUNTS}) AS i`,
  )
  await p.query(
    `INSERT INTO "${schema}"."scheduling_kit_subscriptions$by_webhook" (webhook_id, key)
     SELECT 'wh_' || i, 'acct_' || i FROM generate_series(1, ${ACCOUNTS}) AS i`,
  )
}

it('at 100,000 accounts, a known and an unknown webhook id are each one index probe, no table scan', async () => {
  const p = pool(2)
  const schema = await migratedSchema('lookup', p)
  await fill(schema, p)
  // The store's own statement, as it sends it.
  const sent: { text: string; values: unknown[] }[] = []
  const watching = {
    query: (text: string, values: unknown[]) => {
      sent.push({ text, values })
      return p.query(text, values)
    },
    connect: () => p.connect(),
  } as unknown as typeof p
  const store = new PostgresSubscriptionStore({ pool: watching, schema })
  const found = await store.findByWebhook('wh_77777')
  expect(found?.key).toBe('acct_77777')
  expect(found?.record.webhooks[0]?.secret).toBe('s_77777')
  expect(await store.findByWebhook('wh_made_up')).toBeUndefined()
  expect(sent).toHaveLength(2)
  for (const { text, values } of sent) {
    const { rows } = await p.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values)
    const plan = (rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan
    const nodes = nodesOf(plan)
    expect(nodes.filter((n) => n['Node Type'].includes('Seq Scan'))).toEqual([])
    expect(nodes.filter((n) => n['Node Type'].includes('Bitmap'))).toEqual([])
    expect(
      nodes.some((n) => n['Index Name'] === 'scheduling_kit_subscriptions$by_webhook_pkey'),
    ).toBe(true)
    const blocks = (
      rows[0] as {
        'QUERY PLAN': [{ Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number } }]
      }
    )['QUERY PLAN'][0].Plan
    // A few index pages and one heap page, not thousands.
    expect(blocks['Shared Hit Blocks'] + blocks['Shared Read Blocks']).toBeLessThan(20)
  }
}, 120_000)

it('migrating a database of the first layout fills the index from the rows already there', async () => {
  const p = pool(2)
  const schema = await migratedSchema('backfill', p)
  const store = new PostgresSubscriptionStore({ pool: p, schema })
  await store.compareAndSet(
    'acct_old',
    {
      active: true,
      updatedAt: 0,
      webhooks: [{ id: 'wh_old', secret: 's', url: 'https://a.test/h', createdAt: 0 }],
    },
    undefined,
  )
  // Back to subscriptions@1: its index table gone, the migration unrecorded.
  await p.query(`DROP TABLE "${schema}"."scheduling_kit_subscriptions$by_webhook"`)
  await p.query(
    `DELETE FROM "${schema}".scheduling_kit_migrations WHERE table_name = 'scheduling_kit_subscriptions' AND version = 2`,
  )
  expect((await migrate(p, { schema })).applied).toEqual(['scheduling_kit_subscriptions@2'])
  expect((await store.findByWebhook('wh_old'))?.key).toBe('acct_old')
})
