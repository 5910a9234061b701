// Where the instances and the worker share their data: one Redis (the store bundle, ledger
// included, sign-in states and the BullMQ queue), or one PostgreSQL database and nothing else
// (the same on PostgreSQL, and @scheduling-kit/postgres-queue). The app and the worker open
// the same backend and configure one `createScheduling` object on it (src/scheduling.ts).
import type {
  CredentialCipher,
  DedupeStore,
  Scheduling,
  StoreBundle,
  WebhookQueue,
} from '@scheduling-kit/express'
import type { Config } from './config.js'

export interface Backend {
  /** Tokens, dedupe, subscriptions and the delivery ledger, sealed with one cipher. */
  stores: StoreBundle
  /** Sign-in states: single use across all instances. */
  stateStore: DedupeStore
  queue: WebhookQueue
  /** Runs the worker on `scheduling`: its queue, its ledger and its handlers. */
  work(scheduling: Scheduling): Promise<void>
  /** The demo's record of what the worker handled (connected accounts' deliveries name theirs). */
  record(id: string, account: string | undefined): Promise<void>
}

export async function openBackend(
  config: Config,
  cipher: CredentialCipher,
  poolSize: number,
): Promise<Backend> {
  const who = `[${config.instance}]`
  if (config.backend === 'postgres') {
    const [{ default: pg }, { postgresStores, PostgresDedupeStore }, pgQueue] = await Promise.all([
      import('pg'),
      import('@scheduling-kit/postgres'),
      import('@scheduling-kit/postgres-queue'),
    ])
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: poolSize })
    pool.on('error', (error) => console.error(`${who} postgres: ${error.message}`))
    const { schema } = config
    return {
      // The pool and the schema, named once.
      stores: postgresStores({ pool, schema, cipher }),
      stateStore: new PostgresDedupeStore({ pool, schema, table: 'demo_states' }),
      queue: pgQueue.createPostgresQueue({
        pool,
        queueName: config.queueName,
        schema: `${schema}_queue`,
      }),
      async work(scheduling) {
        await pgQueue.createPostgresWorker({ scheduling, concurrency: 16 }).ready()
      },
      record: async (id, account) =>
        void (await pool.query(`INSERT INTO ${schema}.handled (id, account) VALUES ($1, $2)`, [
          id,
          account ?? null,
        ])),
    }
  }
  const [{ Redis }, { redisStores, RedisDedupeStore }, bull] = await Promise.all([
    import('ioredis'),
    import('@scheduling-kit/redis'),
    import('@scheduling-kit/bullmq'),
  ])
  // Requests of a delivery fail at once while Redis is down, and within 10 s when it hangs
  // (answered 5xx, the service retries), instead of waiting in ioredis's offline queue. Not 2 s:
  // the time-out is a timer of this process, and on a machine whose cores are busy the event loop
  // can lag that long, so the timer can fire before a reply that already arrived is read.
  const redis = new Redis(config.redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 10_000,
  })
  redis.on('error', (error) => console.error(`${who} redis: ${error.message}`))
  await new Promise((resolve) => redis.once('ready', resolve))
  const { prefix } = config
  return {
    // The client, the prefix and the cipher, named once.
    stores: redisStores({ client: redis, prefix, cipher }),
    stateStore: new RedisDedupeStore({ client: redis, prefix: `${prefix}state:` }),
    queue: bull.createBullMQQueue({
      connection: { url: config.redisUrl },
      queueName: config.queueName,
    }),
    async work(scheduling) {
      await bull.createBullMQWorker({ scheduling, concurrency: 16 }).ready()
    },
    record: async (id, account) =>
      void (account === undefined
        ? await redis.rpush(`${prefix}handled`, id)
        : await redis.rpush(`${prefix}handled-accounts`, `${account} ${id}`)),
  }
}
