import { type ChildProcess, fork } from 'node:child_process'
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TokenRecord } from '../../src/tokens/record.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'
import { answerStoreCall, type StoreCall } from '../helpers.js'

// Four OS processes x 50 callers share one store (the parent's, over IPC), against token
// endpoints with single-use rotating refresh tokens, a successful refresh answered 300 ms after
// it spent the token (so the losers hear about the spent token well before the winner can
// write), and three answers to a spent one: refused, and the grant revoked (`strict`, the
// default); refused, the grant kept (`lenient`); new tokens within a grace period (`grace`).
// Five expiries per kind of store and server: the rows of the README's guarantee table.
const PROCESSES = 4
const CALLERS = 50
const EXPIRIES = 5
const LATENCY_MS = 300
const KEY = 'acct_race'

type Mode = 'cas-lease' | 'cas' | 'short-lease' | 'plain'
type ServerKind = 'strict' | 'lenient' | 'grace'

const servers = {} as Record<ServerKind, TokenServer>
beforeAll(async () => {
  servers.strict = await startTokenServer()
  servers.lenient = await startTokenServer({ reuseRevokesFamily: false })
  servers.grace = await startTokenServer({ reuseGraceMs: 10_000 })
  for (const server of Object.values(servers)) server.setLatency(LATENCY_MS, 'success')
})
afterAll(() => Promise.all(Object.values(servers).map((server) => server.close())))

interface Child {
  process: ChildProcess
  ready: Promise<void>
  /** Runs a round with the clock `offset` ms ahead. */
  run(offset: number): Promise<string[]>
}

function startChild(server: TokenServer, store: MemoryTokenStore, mode: Mode): Child {
  const config = {
    // A lost connection is declared after 1 s of watching, not the default 10.
    invalidGrantWaitMs: 1_000,
    authUrl: server.url,
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    redirectUri: server.redirectUri,
    key: KEY,
    callers: CALLERS,
    mode,
  }
  const child = fork(
    new URL('../fixtures/race-child.mjs', import.meta.url),
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
    run: (offset: number) =>
      new Promise<string[]>((resolve) => {
        onDone = resolve
        child.send({ type: 'go', offset })
      }),
  }
}

/** How far each expiry moves the processes' clocks on: past a 2-hour token's lifetime. */
const ROUND_MS = 7_201_000

/**
 * An expiry: the processes' clocks move on by `ROUND_MS` (each keeps its token in memory until
 * its refresh time, by its own clock), and the stored record is expired at the new time.
 */
async function expire(store: MemoryTokenStore, offset: number): Promise<void> {
  const record = (await store.get(KEY))!
  const { version: _, ...rest } = record
  await store.set(KEY, {
    ...rest,
    expiresAt: Date.now() + offset - 1000,
    obtainedAt: Date.now() + offset - ROUND_MS,
  })
}

async function connect(server: TokenServer, store: MemoryTokenStore): Promise<void> {
  const granted = server.grant(KEY)
  await store.set(KEY, {
    accessToken: granted.access_token,
    refreshToken: granted.refresh_token,
    tokenType: 'bearer',
    expiresAt: Date.now() + 7_200_000,
  })
}

/** Starts the processes, runs `rounds` expiries, hands each round's results to `check`. */
async function race(
  kind: ServerKind,
  mode: Mode,
  rounds: number,
  check: (
    round: number,
    results: string[],
    refreshes: number,
    stored: TokenRecord,
  ) => Promise<void>,
): Promise<void> {
  const server = servers[kind]
  const store = new MemoryTokenStore()
  await connect(server, store)
  const children = Array.from({ length: PROCESSES }, () => startChild(server, store, mode))
  try {
    await Promise.all(children.map((c) => c.ready))
    for (let round = 1; round <= rounds; round++) {
      const offset = round * ROUND_MS
      await expire(store, offset)
      const before = server.counters.refresh
      const results = (await Promise.all(children.map((c) => c.run(offset)))).flat()
      await check(round, results, server.counters.refresh - before, (await store.get(KEY))!)
    }
  } finally {
    for (const c of children) c.process.kill()
  }
}

describe.each<[Mode, ServerKind, string]>([
  ['cas-lease', 'strict', 'compare-and-set and a lease: exactly one refresh per expiry'],
  ['short-lease', 'strict', 'a short lease, renewed while the refresh runs'],
  ['cas-lease', 'lenient', 'compare-and-set and a lease'],
  ['cas', 'lenient', 'compare-and-set, no lease'],
  ['plain', 'lenient', 'a plain get/set/delete store'],
  ['cas', 'grace', 'compare-and-set, no lease'],
])('%s, %s server: %s', (mode, kind) => {
  it(`${PROCESSES} processes x ${CALLERS} callers, ${EXPIRIES} expiries: no caller error, one token, the stored refresh token stays valid, never flagged`, async () => {
    const server = servers[kind]
    const revokedBefore = server.counters.revoked
    let last = ''
    await race(kind, mode, EXPIRIES, async (round, results, refreshes, stored) => {
      const errors = results.filter((r) => r.startsWith('error:'))
      expect(errors, `round ${round}`).toEqual([])
      expect(new Set(results), `round ${round}`).toEqual(new Set([stored.accessToken]))
      expect(stored.accessToken, `round ${round}`).not.toBe(last)
      last = stored.accessToken
      expect(stored.reauthorizationRequired, `round ${round}`).toBeUndefined()
      expect(server.isRefreshTokenValid(stored.refreshToken), `round ${round}`).toBe(true)
      expect(server.accountOf(`Bearer ${stored.accessToken}`), `round ${round}`).toBe(KEY)
      if (mode === 'cas-lease' || mode === 'short-lease')
        expect(refreshes, `round ${round}`).toBe(1)
    })
    expect(server.counters.revoked).toBe(revokedBefore)
  }, 180_000)
})

describe('a plain store against a server with a grace period', () => {
  it('no caller error and no lost connection, though callers of different processes may get different (valid) tokens', async () => {
    const server = servers.grace
    const revokedBefore = server.counters.revoked
    await race('grace', 'plain', EXPIRIES, async (round, results) => {
      expect(
        results.filter((r) => r.startsWith('error:')),
        `round ${round}`,
      ).toEqual([])
      for (const token of new Set(results))
        expect(server.accountOf(`Bearer ${token}`), `round ${round}`).toBe(KEY)
    })
    expect(server.counters.revoked).toBe(revokedBefore)
  }, 180_000)
})

describe.each<[Mode]>([['cas'], ['plain']])(
  '%s store, no lease, against the strict server (rotation, reuse revokes the grant)',
  (mode) => {
    it('loses the connection: several processes spend the same refresh token, the callers get tokens the API refuses (the README says: use a lease)', async () => {
      const server = servers.strict
      const revokedBefore = server.counters.revoked
      await race('strict', mode, 1, async (_round, results, refreshes) => {
        expect(refreshes).toBeGreaterThan(1)
        const tokens = results.filter((r) => !r.startsWith('error:'))
        expect(tokens.some((token) => server.accountOf(`Bearer ${token}`) === undefined)).toBe(true)
      })
      expect(server.counters.revoked).toBeGreaterThan(revokedBefore)
    }, 180_000)
  },
)
