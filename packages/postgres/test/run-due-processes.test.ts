import { spawn } from 'node:child_process'
import { createScheduling } from '@scheduling-kit/core'
import { startFakeSchedulingService } from '@scheduling-kit/testing'
import { expect, it } from 'vitest'
import { postgresStores } from '../src/index.js'
import { DATABASE_URL, migratedSchema, pool } from './helpers.js'

// The periodic work called by two OS processes at once, each as a cron calls runDue(), over
// the same PostgreSQL stores and the fake service, for one period of refresh ahead and of the
// sweep: each connection's token refreshed once (its record's version moved by one, one token
// call each, none on the request path), each account listed at the service once, none twice,
// none skipped.

const ACCOUNTS = 60
const PERIOD_MS = 8_000
const HOOK_URL = 'https://app.example.test/webhooks/scheduling'
const child = new URL('./fixtures/run-due-child.mjs', import.meta.url)

it('2 processes calling runDue() over one period: each token refreshed once, each account listed once', async () => {
  const db = pool(8)
  const schema = await migratedSchema('run_due', db)
  const service = await startFakeSchedulingService({ retrySchedule: [], reuseGraceMs: 60_000 })
  try {
    const app = service.connectApp('https://app.example.test')
    const stores = postgresStores({ pool: db, schema })
    const keys = Array.from({ length: ACCOUNTS }, (_, i) => `acct_${i}`)
    const connectedAt = Date.now() - 600_000
    for (const key of keys) {
      const granted = service.auth.grant(key)
      await stores.tokens.set(key, {
        accessToken: granted.access_token,
        refreshToken: granted.refresh_token,
        tokenType: 'bearer',
        expiresAt: connectedAt + 7_200_000,
        obtainedAt: connectedAt,
        account: { id: key },
      })
    }
    const quiet = { debug() {}, info() {}, warn() {}, error() {} }
    const setup = createScheduling({ ...app, webhookUrl: HOOK_URL, stores, logger: quiet })
    for (const key of keys) await setup.subscriptions!.ensure(key)
    const start = Date.now()
    for (let shard = 0; shard < 16; shard++) {
      await stores.sweeps!.setCheckpoint(`refresh:${shard}`, start, undefined)
      await stores.sweeps!.setCheckpoint(`sweep:${shard}`, start, undefined)
    }
    const versions = new Map<string, number | undefined>()
    for (const key of keys) versions.set(key, (await stores.tokens.get(key))?.version)
    const lists = new Map(keys.map((k) => [k, service.listsByAccount.get(k) ?? 0]))
    const refreshes = service.auth.counters.refresh
    const env = {
      ...process.env,
      DATABASE_URL,
      SCHEMA: schema,
      APP: JSON.stringify(app),
      HOOK_URL,
      PERIOD_MS: String(PERIOD_MS),
      STEP_MS: '100',
      END: String(start + PERIOD_MS),
    }
    const codes = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<number | null>((resolve) =>
            spawn(process.execPath, [child.pathname], { env, stdio: 'inherit' }).on(
              'exit',
              resolve,
            ),
          ),
      ),
    )
    expect(codes).toEqual([0, 0])
    const moved: Array<[string, number]> = []
    for (const key of keys) {
      const now = (await stores.tokens.get(key))?.version ?? 0
      if (now - (versions.get(key) ?? 0) !== 1) moved.push([key, now - (versions.get(key) ?? 0)])
    }
    expect(moved).toEqual([])
    expect(service.auth.counters.refresh - refreshes).toBe(ACCOUNTS)
    const listed = keys
      .map((k) => [k, (service.listsByAccount.get(k) ?? 0) - lists.get(k)!] as const)
      .filter(([, n]) => n !== 1)
    expect(listed).toEqual([])
  } finally {
    await service.close()
  }
}, 120_000)
