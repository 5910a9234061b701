// Another OS process keeps a connected key's token in memory: after a reconnection to another
// service account, and after a disconnect, made through the app's routes in this process, the
// other process answers for the new account, then not at all, once its revalidateMs passed.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import {
  completeOAuthFlow,
  startAppInstance,
  startFakeSchedulingService,
} from '@scheduling-kit/testing'
import { expect, it } from 'vitest'
import { RedisSubscriptionStore, RedisTokenStore } from '../src/index.js'
import { REDIS_URL, redis, uniquePrefix } from './helpers.js'

// Reads a command per line ("me"), answers a JSON line: the account GET /me answers for with the
// manager's token, or the error's code.
const CHILD = `
import { createInterface } from 'node:readline'
import { Redis } from 'ioredis'
import { createOAuthClient, createSchedulingClient, createTokenManager } from '@scheduling-kit/core'
import { RedisTokenStore } from './dist/index.js'
const client = new Redis(process.env.REDIS_URL)
const tokens = createTokenManager({
  oauth: createOAuthClient(JSON.parse(process.env.OAUTH)),
  store: new RedisTokenStore({ client, prefix: process.env.PREFIX, logger: false }),
  revalidateMs: 300,
})
const api = createSchedulingClient({
  baseUrl: process.env.API_URL,
  token: { manager: tokens, key: 'user-1' },
  retry: { attempts: 1 },
})
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'quit') break
  const answer = await api.me().then((me) => ({ id: me.id }), (error) => ({ error: error.code }))
  console.log(JSON.stringify(answer))
}
await tokens.close()
await client.quit()`

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

it('another process: the new account after a reconnection, nothing after a disconnect, within revalidateMs', async () => {
  const service = await startFakeSchedulingService({ autoApprove: true, retrySchedule: [] })
  const prefix = uniquePrefix('conn-processes')
  const app = await startAppInstance({
    service,
    tokenStore: new RedisTokenStore({ client: redis(), prefix, logger: false }),
    subscriptionStore: new RedisSubscriptionStore({ client: redis(), prefix, logger: false }),
  })
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD], {
    cwd: new URL('..', import.meta.url),
    env: {
      ...process.env,
      REDIS_URL,
      PREFIX: prefix,
      API_URL: service.apiUrl,
      OAUTH: JSON.stringify({
        clientId: service.clientId,
        clientSecret: service.clientSecret,
        redirectUri: `${app.url}/auth/scheduling/callback`,
        authUrl: service.authUrl,
      }),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const answers = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const ask = async () => {
    child.stdin!.write('me\n')
    return JSON.parse((await answers.next()).value as string) as { id?: string; error?: string }
  }
  const connect = async (account: string) =>
    (await completeOAuthFlow(app.loginUrl, { account, cookie: 'uid=user-1' })).cookie
  try {
    await connect('acct_p')
    expect(await ask()).toEqual({ id: 'acct_p' })
    const cookie = await connect('acct_q')
    // Past revalidateMs (300) and the timer's step (250), with room for a loaded machine.
    await sleep(1_300)
    expect(await ask()).toEqual({ id: 'acct_q' })
    expect((await app.disconnect(`uid=user-1; ${cookie}`)).status).toBe(200)
    await sleep(1_300)
    expect(await ask()).toEqual({ error: 'not_connected' })
  } finally {
    child.stdin!.end('quit\n')
    await new Promise((resolve) => child.on('exit', resolve))
    await app.close()
    await service.close()
  }
}, 60_000)
