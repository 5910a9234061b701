// One server process of `runRefreshRace`: a token manager over the store the module under test
// creates, its callers asking for one key's access token at once when the parent says go.
import { createOAuthClient, createTokenManager, type TokenStore } from '@scheduling-kit/core'
import type { ChildConfig, ChildMessage, ParentMessage } from './refresh-race.js'

const config: ChildConfig = JSON.parse(process.argv[2]!)
const send = (message: ChildMessage) => process.send!(message)

let hold = false
let proceed: (() => void) | undefined

const oauth = createOAuthClient({
  authUrl: config.authUrl,
  clientId: config.clientId,
  clientSecret: config.clientSecret,
  redirectUri: config.redirectUri,
  // In the round the parent kills the lease holder in, each token request waits for its word:
  // the holder is killed here, with the lease taken and the request not yet sent.
  fetch: async (input, init) => {
    if (hold) {
      await new Promise<void>((resolve) => {
        proceed = resolve
        send({ type: 'refreshing' })
      })
    }
    return globalThis.fetch(input, init)
  },
})

async function main(): Promise<void> {
  const module = (await import(config.storeModule)) as {
    createStore(): TokenStore | Promise<TokenStore>
  }
  const store = await module.createStore()
  const manager = createTokenManager({
    oauth,
    store,
    lease: { ttlMs: config.leaseTtlMs, pollMs: 5 },
  })
  process.on('message', async (message: ParentMessage) => {
    if (message.type === 'proceed') return proceed?.()
    if (message.type === 'exit') return process.exit(0)
    hold = message.hold
    const results = await Promise.allSettled(
      Array.from({ length: config.callers }, () => manager.getAccessToken(config.key)),
    )
    send({
      type: 'done',
      results: results.map((r) =>
        r.status === 'fulfilled'
          ? r.value
          : `error:${(r.reason as { code?: string })?.code ?? String(r.reason)}`,
      ),
    })
  })
  send({ type: 'ready' })
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
