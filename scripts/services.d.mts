/** Redis and PostgreSQL for the tests and demos: the running ones, or servers started here. */
export function ensureServices(which?: { redis?: boolean; postgres?: boolean }): Promise<{
  env: { REDIS_URL?: string; DATABASE_URL?: string }
  stop(): Promise<void>
}>
