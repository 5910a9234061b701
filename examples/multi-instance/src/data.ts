// What the demo reads of the data the instances share, on either backend: the token store (to
// make a token expire), what the worker handled, the subscriptions, and everything at rest as
// text (to look for secrets in the clear). Also the set-up and clean-up each backend needs.
import type { createCredentialCipher, SubscriptionStore, TokenStore } from '@scheduling-kit/express'
import { migrate, PostgresSubscriptionStore, PostgresTokenStore } from '@scheduling-kit/postgres'
import { RedisSubscriptionStore, RedisTokenStore } from '@scheduling-kit/redis'
import { Redis } from 'ioredis'
import pg from 'pg'
import type { Config } from './config.js'

type Cipher = ReturnType<typeof createCredentialCipher>

export interface DemoData {
  readonly tokens: TokenStore
  readonly subscriptions: SubscriptionStore
  /** The keys of the stored tokens. */
  tokenKeys(): Promise<string[]>
  /** Event ids the worker handled for the app's own webhook, one per run. */
  handled(): Promise<string[]>
  /** `account event-id` for each run of a connected account's event. */
  handledByAccount(): Promise<string[]>
  /** Everything stored for the demo, as text. */
  dump(): Promise<string>
  close(): Promise<void>
}

export class RedisData implements DemoData {
  readonly tokens: RedisTokenStore
  readonly subscriptions: RedisSubscriptionStore
  readonly #redis: Redis
  readonly #prefix: string

  constructor(config: Pick<Config, 'redisUrl' | 'prefix'>, cipher: Cipher) {
    this.#redis = new Redis(config.redisUrl)
    this.#prefix = config.prefix
    const options = { client: this.#redis, prefix: config.prefix, logger: false, cipher } as const
    this.tokens = new RedisTokenStore(options)
    this.subscriptions = new RedisSubscriptionStore(options)
  }

  async tokenKeys() {
    const start = `${this.#prefix}token:{`.length
    return (await this.#redis.keys(`${this.#prefix}token:*`)).map((k) => k.slice(start, -1))
  }
  handled() {
    return this.#redis.lrange(`${this.#prefix}handled`, 0, -1)
  }
  handledByAccount() {
    return this.#redis.lrange(`${this.#prefix}handled-accounts`, 0, -1)
  }
  async dump() {
    let dump = ''
    for (const key of await this.#redis.keys(`${this.#prefix}*`)) {
      const type = await this.#redis.type(key)
      if (type === 'hash') dump += JSON.stringify(await this.#redis.hgetall(key))
      else if (type === 'string') dump += (await this.#redis.get(key)) ?? ''
    }
    return dump
  }
  async close() {
    this.#redis.disconnect()
  }
}

export class PostgresData implements DemoData {
  readonly tokens: PostgresTokenStore
  readonly subscriptions: PostgresSubscriptionStore
  readonly #pool: pg.Pool
  readonly #schema: string

  constructor(config: Pick<Config, 'databaseUrl' | 'schema'>, cipher: Cipher) {
    this.#pool = new pg.Pool({ connectionString: config.databaseUrl, max: 4 })
    this.#schema = config.schema
    const options = { pool: this.#pool, schema: config.schema, logger: false, cipher } as const
    this.tokens = new PostgresTokenStore(options)
    this.subscriptions = new PostgresSubscriptionStore(options)
  }

  /** The stores' tables, the sign-in states' table and the worker's record, before any instance starts. */
  async setUp() {
    const schema = this.#schema
    await migrate(this.#pool, { schema })
    await migrate(this.#pool, { schema, dedupeTable: 'demo_states', only: ['dedupe'] })
    await this.#pool.query(`CREATE TABLE ${schema}.handled (id text NOT NULL, account text)`)
  }
  async tokenKeys() {
    const { rows } = await this.#pool.query(`SELECT key FROM ${this.#schema}.scheduling_kit_tokens`)
    return rows.map((r) => r.key as string)
  }
  async handled() {
    const { rows } = await this.#pool.query(
      `SELECT id FROM ${this.#schema}.handled WHERE account IS NULL`,
    )
    return rows.map((r) => r.id as string)
  }
  async handledByAccount() {
    const { rows } = await this.#pool.query(
      `SELECT account, id FROM ${this.#schema}.handled WHERE account IS NOT NULL`,
    )
    return rows.map((r) => `${r.account} ${r.id}`)
  }
  async dump() {
    let dump = ''
    for (const schema of [this.#schema, `${this.#schema}_queue`]) {
      const { rows: tables } = await this.#pool.query(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
        [schema],
      )
      for (const { table_name } of tables) {
        const { rows } = await this.#pool.query(`SELECT * FROM ${schema}."${table_name}"`)
        // Binary columns as their bytes, as text and as hex: a secret kept raw in one is found.
        dump += JSON.stringify(rows, (_, value) =>
          value?.type === 'Buffer' && Array.isArray(value.data)
            ? `${Buffer.from(value.data).toString('latin1')} ${Buffer.from(value.data).toString('hex')}`
            : value,
        )
      }
    }
    return dump
  }
  async close() {
    await this.#pool.query(`DROP SCHEMA IF EXISTS ${this.#schema} CASCADE`)
    await this.#pool.query(`DROP SCHEMA IF EXISTS ${this.#schema}_queue CASCADE`)
    await this.#pool.end()
  }
}
