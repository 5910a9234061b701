// Where the instances and the worker share their data: one Redis (tokens, sign-in states,
// dedupe, subscriptions, and the BullMQ queue), or one PostgreSQL database and nothing else
// (the same stores on PostgreSQL, and @scheduling-kit/postgres-queue). The app and the worker
// take what they need from here; the rest of their code is the same for both.
import type {
  createCredentialCipher,
  DedupeStore,
  SubscriptionStore,
  TokenStore,
  WebhookHandler,
  WebhookQueue,
} from '@scheduling-kit/express'
import type { Config } from './config.js'

/** What an app instance shares with the others. */
export interface AppBackend {
  tokenStore: TokenStore
  /** Sign-in states: single use across all instances. */
  stateStore: DedupeStore
  dedupe: DedupeStore
  subscriptionStore: SubscriptionStore
  queue: WebhookQueue
}

/** What the worker needs: a worker on the queue, and where it records what it handled. */
export interface WorkerBackend {
  record(id: string, account: string | undefined): Promise<void>
  work(handler: Pick<WebhookHandler, 'dispatch'>): Promise<void>
}

export async function appBackend(
  config: Config,
  cipher: ReturnType<typeof createCredentialCipher>,
): Promise<AppBackend> {
  if (config.backend === 'postgres') {
    const [{ default: pg }, stores, { createPostgresQueue }] = await Promise.all([
      import('pg'),
      import('@scheduling-kit/postgres'),
      import('@scheduling-kit/postgres-queue'),
    ])
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10 })
    pool.on('error', (error) => console.error(`[${config.instance}] postgres: ${error.message}`))
    const { schema } = config
    return {
      tokenStore: new stores.PostgresTokenStore({ pool, schema, cipher }),
      stateStore: new stores.PostgresDedupeStore({ pool, schema, table: 'demo_states' }),
      dedupe: new stores.PostgresDedupeStore({ pool, schema }),
      subscriptionStore: new stores.PostgresSubscriptionStore({ pool, schema, cipher }),
      queue: createPostgresQueue({ pool, queueName: config.queueName, schema: `${schema}_queue` }),
    }
  }
  const [{ Redis }, stores, { createBullMQQueue }] = await Promise.all([
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
  redis.on('error', (error) => console.error(`[${config.instance}] redis: ${error.message}`))
  await new Promise((resolve) => redis.once('ready', resolve))
  const { prefix } = config
  return {
    tokenStore: new stores.RedisTokenStore({ client: redis, prefix, cipher }),
    stateStore: new stores.RedisDedupeStore({ client: redis, prefix: `${prefix}state:` }),
    dedupe: new stores.RedisDedupeStore({ client: redis, prefix }),
    subscriptionStore: new stores.RedisSubscriptionStore({ client: redis, prefix, cipher }),
    queue: createBullMQQueue({ connection: { url: config.redisUrl }, queueName: config.queueName }),
  }
}

export async function workerBackend(config: Config): Promise<WorkerBackend> {
  if (config.backend === 'postgres') {
    const [{ default: pg }, { createPostgresWorker }] = await Promise.all([
      import('pg'),
      import('@scheduling-kit/postgres-queue'),
    ])
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 20 })
    pool.on('error', (error) => console.error(`[worker] postgres: ${error.message}`))
    return {
      record: async (id, account) =>
        void (await pool.query(
          `INSERT INTO ${config.schema}.handled (id, account) VALUES ($1, $2)`,
          [id, account ?? null],
        )),
      async work(handler) {
        const worker = createPostgresWorker({
          handler,
          pool,
          queueName: config.queueName,
          schema: `${config.schema}_queue`,
          concurrency: 16,
        })
        await worker.ready()
      },
    }
  }
  const [{ Redis }, { createWebhookWorker }] = await Promise.all([
    import('ioredis'),
    import('@scheduling-kit/bullmq'),
  ])
  const redis = new Redis(config.redisUrl)
  return {
    record: async (id, account) =>
      void (account === undefined
        ? await redis.rpush(`${config.prefix}handled`, id)
        : await redis.rpush(`${config.prefix}handled-accounts`, `${account} ${id}`)),
    async work(handler) {
      const worker = createWebhookWorker({
        handler,
        connection: { url: config.redisUrl },
        queueName: config.queueName,
        concurrency: 16,
      })
      await worker.ready()
    },
  }
}
