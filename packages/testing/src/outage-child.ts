// One instance of `runRefreshAheadOutage`: refresh ahead over the stores the module under test
// creates, against the fake service's token endpoint, stepped every `stepMs` until the parent
// stops it (or kills it). It tells each refresh it starts and each one stored, with the time.
import { createOAuthClient, createTokenManager, RefreshAhead } from '@scheduling-kit/core'
import type { OutageChild, OutageMessage, OutageStores } from './refresh-outage.js'

const config: OutageChild = JSON.parse(process.argv[2]!)
const send = (message: OutageMessage) =>
  new Promise<void>((resolve) => process.send!(message, () => resolve()))
const imported = (await import(config.storeModule)) as {
  createStores(): OutageStores | Promise<OutageStores>
}
const stores = await imported.createStores()
const tokens = createTokenManager({
  oauth: createOAuthClient({
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    redirectUri: 'https://app.example.test/callback',
    authUrl: config.authUrl,
  }),
  store: stores.tokens,
  // A dead holder's lease on a connection lapses soon; a refresh's budget stays within it.
  lease: { ttlMs: 3_000, pollMs: 20 },
  retry: { attempts: 2, requestTimeoutMs: 1_000, baseDelayMs: 10, maxDelayMs: 50 },
})
const keys = Array.from({ length: config.accounts }, (_, i) => `acct_${i}`)
const ahead = new RefreshAhead(
  {
    async getRecord(key, options) {
      if (options?.rejectedToken === undefined) return tokens.getRecord(key, options)
      await send({ trying: key })
      const record = await tokens.getRecord(key, options)
      if (record.accessToken !== options.rejectedToken)
        await send({ refreshed: key, at: Date.now() })
      return record
    },
  },
  {
    keys: async function* () {
      yield* keys
    },
    store: stores.sweeps,
    everyMs: config.everyMs,
    leaseTtlMs: config.leaseMs,
  },
)
let stopped = false
process.on('message', () => {
  stopped = true
})
await send({ ready: true })
while (!stopped) {
  await send({ stepping: true })
  await ahead.step().catch(() => {})
  await new Promise((resolve) => setTimeout(resolve, config.stepMs))
}
process.exit(0)
