/** What every process of the deployment is told, through its environment. */
export interface Config {
  port: number
  instance: string
  publicUrl: string
  /** Where the instances share their data: one Redis, or one PostgreSQL database and nothing else. */
  backend: 'redis' | 'postgres'
  /** With the `redis` backend. */
  redisUrl: string
  /** With the `postgres` backend: the database, and the schema of the demo's tables. */
  databaseUrl: string
  schema: string
  clientId: string
  clientSecret: string
  authUrl: string
  apiUrl: string
  webhookSecret: string
  cookieSecret: string
  /** The keys that seal tokens and webhook secrets in Redis, `id:key,...`, the current one first. */
  credentialKeys: string
  queueName: string
  prefix: string
}

const KEYS = {
  port: 'PORT',
  instance: 'INSTANCE',
  publicUrl: 'PUBLIC_URL',
  backend: 'DEMO_BACKEND',
  redisUrl: 'REDIS_URL',
  databaseUrl: 'DATABASE_URL',
  schema: 'DEMO_SCHEMA',
  clientId: 'SCHEDULING_CLIENT_ID',
  clientSecret: 'SCHEDULING_CLIENT_SECRET',
  authUrl: 'SCHEDULING_AUTH_URL',
  apiUrl: 'SCHEDULING_API_URL',
  webhookSecret: 'SCHEDULING_SECRET',
  cookieSecret: 'COOKIE_SECRET',
  credentialKeys: 'CREDENTIAL_KEYS',
  queueName: 'QUEUE_NAME',
  prefix: 'REDIS_PREFIX',
} as const

export function toEnv(config: Partial<Config>): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [field, name] of Object.entries(KEYS)) {
    const value = config[field as keyof Config]
    if (value !== undefined) env[name] = String(value)
  }
  return env
}

export function fromEnv(env = process.env): Config {
  const read = (name: string) => {
    const value = env[name]
    if (value === undefined || value === '') throw new Error(`${name} is not set`)
    return value
  }
  return {
    port: Number(env.PORT ?? 0),
    instance: env.INSTANCE ?? 'app',
    publicUrl: read(KEYS.publicUrl),
    backend: env.DEMO_BACKEND === 'postgres' ? 'postgres' : 'redis',
    ...(env.DEMO_BACKEND === 'postgres'
      ? { redisUrl: '', databaseUrl: read(KEYS.databaseUrl), schema: read(KEYS.schema) }
      : { redisUrl: read(KEYS.redisUrl), databaseUrl: '', schema: '' }),
    clientId: read(KEYS.clientId),
    clientSecret: read(KEYS.clientSecret),
    authUrl: read(KEYS.authUrl),
    apiUrl: read(KEYS.apiUrl),
    webhookSecret: read(KEYS.webhookSecret),
    cookieSecret: read(KEYS.cookieSecret),
    credentialKeys: read(KEYS.credentialKeys),
    queueName: read(KEYS.queueName),
    prefix: read(KEYS.prefix),
  }
}
