import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll } from 'vitest'

/** The Redis the tests use: REDIS_URL (scripts/test.mjs sets it when it starts its own), else the local one. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

const clients: Redis[] = []
afterAll(async () => {
  await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())))
})

/** A client closed after the file's tests. */
export function redis(): Redis {
  const client = new Redis(REDIS_URL)
  clients.push(client)
  return client
}

/** A key prefix no other test uses. */
export const uniquePrefix = (name: string) => `sk-test:${name}:${randomBytes(4).toString('hex')}:`
