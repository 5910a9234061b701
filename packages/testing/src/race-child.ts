// One server process of `runRefreshRace`: a token manager over the store the module under test
// creates, its callers asking for one key's access token at once when the parent says go.
import { createOAuthClient, createTokenManager, type TokenStore } from '@scheduling-kit/core'
import type { ChildConfig, ChildMessage, Hold, ParentMessage } from './race-types.js'

const config: ChildConfig = JSON.parse(process.argv[2]!)
const send = (message: ChildMessage) => process.send!(message)

let hold: Hold = 'none'
let cut = false
let proceed: (() => void) | undefined

/** Tells the parent, and waits for its word (unless it is only told). */
function report(type: 'refreshing' | 'answered', wait: boolean): Promise<void> {
  return new Promise<void>((resolve) => {
    proceed = resolve
    send({ type })
    if (!wait) resolve()
  })
}

// This process's clock: each round the parent moves it on past the token's lifetime (with the
// stored record's times), as the hours between two expiries would.
let offset = 0
const now = () => Date.now() + offset

const oauth = createOAuthClient({
  now,
  authUrl: config.authUrl,
  clientId: config.clientId,
  clientSecret: config.clientSecret,
  redirectUri: config.redirectUri,
  // In a round where the parent stops the lease holder, each token request tells it when the
  // request leaves and when its answer is read, and waits there for its word when the parent
  // stops the holder at that point.
  fetch: async (input, init) => {
    if (hold === 'none') return globalThis.fetch(input, init)
    await report('refreshing', hold === 'before-request')
    const response = await globalThis.fetch(input, init)
    const body = await response.arrayBuffer()
    await report('answered', hold === 'after-answer')
    return new Response(body, { status: response.status, headers: response.headers })
  },
})

async function main(): Promise<void> {
  const module = (await import(config.storeModule)) as {
    createStore(): TokenStore | Promise<TokenStore>
    cutConnection?(store: TokenStore): unknown
  }
  const store = await module.createStore()
  // The first write after a cut is ordered throws, after the module cut the real connection.
  const writes: TokenStore = {
    get: (key) => store.get(key),
    set: (key, record) => store.set(key, record),
    delete: (key) => store.delete(key),
    compareAndSet: async (key, record, version) => {
      if (cut) {
        cut = false
        await module.cutConnection?.(store)
        throw new Error('the store connection was cut at the write')
      }
      return store.compareAndSet!(key, record, version)
    },
  }
  if (store.acquireLease !== undefined && store.releaseLease !== undefined) {
    writes.acquireLease = (key, owner, ttl) => store.acquireLease!(key, owner, ttl)
    writes.releaseLease = (key, owner) => store.releaseLease!(key, owner)
  }
  if (store.compareAndSet === undefined) delete writes.compareAndSet
  const manager = createTokenManager({
    oauth,
    now,
    store: writes,
    lease: { ttlMs: config.leaseTtlMs, pollMs: 5 },
    // One attempt as long as the lease allows (the set-up check): a loaded machine must not
    // time the token request out.
    retry: { attempts: 1, requestTimeoutMs: Math.min(15_000, config.leaseTtlMs) },
  })
  // The README's shutdown recipe: finish what is under way, then exit.
  process.once('SIGTERM', () => {
    manager.close().then(
      () => setTimeout(() => process.exit(0), 50),
      () => process.exit(1),
    )
  })
  process.on('message', async (message: ParentMessage) => {
    if (message.type === 'proceed') return proceed?.()
    if (message.type === 'exit') return process.exit(0)
    hold = message.hold
    cut = message.cut
    offset = message.offset
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
