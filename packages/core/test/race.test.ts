import { type ChildProcess, fork } from 'node:child_process'
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryTokenStore } from '../src/tokens/store.js'
import { answerStoreCall, type StoreCall } from './helpers.js'

// Four OS processes x 50 callers share one store (the parent's, over IPC), against a strict token
// endpoint: single-use rotating refresh tokens, a spent one refused with invalid_grant at once,
// and a successful refresh answered 300 ms after it spent the token, so the losers hear
// invalid_grant well before the winner can write. Five expiries per kind of store.
const PROCESSES = 4
const CALLERS = 50
const EXPIRIES = 5
const LATENCY_MS = 300
const KEY = 'acct_race'

type Mode = 'cas-lease' | 'cas' | 'short-lease' | 'plain'

let server: TokenServer
beforeAll(async () => {
  server = await startTokenServer({ reuseRevokesFamily: false })
  server.setLatency(LATENCY_MS, 'success')
})
afterAll(() => server.close())

interface Child {
  process: ChildProcess
  ready: Promise<void>
  run(): Promise<string[]>
}

function startChild(store: MemoryTokenStore, mode: Mode): Child {
  const config = {
    authUrl: server.url,
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    redirectUri: server.redirectUri,
    key: KEY,
    callers: CALLERS,
    mode,
  }
  const child = fork(
    new URL('./fixtures/race-child.mjs', import.meta.url),
    [JSON.stringify(config)],
    {
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  )
  let onDone: ((tokens: string[]) => void) | undefined
  const ready = new Promise<void>((resolve, reject) => {
    child.once('error', reject)
    type Message = { type: 'ready' } | { type: 'done'; tokens: string[] } | StoreCall
    child.on('message', async (message: Message) => {
      if (message.type === 'ready') return resolve()
      if (message.type === 'done') return onDone?.(message.tokens)
      child.send(await answerStoreCall(store, message))
    })
  })
  return {
    process: child,
    ready,
    run: () =>
      new Promise<string[]>((resolve) => {
        onDone = resolve
        child.send({ type: 'go' })
      }),
  }
}

async function expire(store: MemoryTokenStore): Promise<void> {
  const record = (await store.get(KEY))!
  const { version: _, ...rest } = record
  await store.set(KEY, {
    ...rest,
    expiresAt: Date.now() - 1000,
    obtainedAt: Date.now() - 7_201_000,
  })
}

describe.each<[Mode, string]>([
  ['cas-lease', 'compare-and-set and a lease: exactly one refresh per expiry'],
  ['cas', 'compare-and-set, no lease'],
  ['short-lease', 'a lease shorter than the refresh'],
  ['plain', 'a plain get/set/delete store'],
])('%s: %s', (mode) => {
  it(`${PROCESSES} processes x ${CALLERS} callers, ${EXPIRIES} expiries: no caller error, the stored refresh token stays valid, never flagged`, async () => {
    const store = new MemoryTokenStore()
    const granted = server.grant(KEY)
    await store.set(KEY, {
      accessToken: granted.access_token,
      refreshToken: granted.refresh_token,
      tokenType: 'bearer',
      expiresAt: Date.now() + 7_200_000,
    })
    const children = Array.from({ length: PROCESSES }, () => startChild(store, mode))
    try {
      await Promise.all(children.map((c) => c.ready))
      const revokedBefore = server.counters.revoked
      for (let round = 1; round <= EXPIRIES; round++) {
        await expire(store)
        const refreshesBefore = server.counters.refresh
        const okBefore = server.counters.refreshOk
        const results = (await Promise.all(children.map((c) => c.run()))).flat()
        const stored = (await store.get(KEY))!
        const errors = results.filter((r) => r.startsWith('error:'))
        expect(errors, `round ${round}`).toEqual([])
        expect(new Set(results), `round ${round}`).toEqual(new Set([stored.accessToken]))
        expect(stored.reauthorizationRequired, `round ${round}`).toBeUndefined()
        expect(server.isRefreshTokenValid(stored.refreshToken), `round ${round}`).toBe(true)
        expect(server.counters.refreshOk - okBefore, `round ${round}`).toBe(1)
        if (mode === 'cas-lease') {
          expect(server.counters.refresh - refreshesBefore, `round ${round}`).toBe(1)
        }
      }
      expect(server.counters.revoked).toBe(revokedBefore)
    } finally {
      for (const c of children) c.process.kill()
    }
  }, 60_000)
})
