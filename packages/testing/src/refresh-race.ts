import { randomBytes } from 'node:crypto'
import { ConfigError, type TokenRecord, type TokenStore } from '@scheduling-kit/core'
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import {
  exited,
  expire,
  moduleUrl,
  type Racer,
  ROUND_MS,
  shutDown,
  spawnRacer,
  withTimeout,
} from './race-racers.js'
import { Stopper } from './race-stopper.js'
import type {
  ChildConfig,
  ParentMessage,
  RaceStop,
  RefreshRaceOptions,
  RefreshRaceReport,
  RefreshRaceRound,
} from './race-types.js'

/**
 * The multi-process refresh race, for any `TokenStore` shared between processes: `processes`
 * OS processes x `callers` callers ask for one connection's token as it expires, `expiries`
 * times, against a strict token endpoint (single-use rotating refresh tokens; reusing a spent
 * one revokes the grant). Resolves to a report whose `problems` list every broken promise:
 * more or fewer than one refresh per expiry, a caller error, callers given different tokens, a
 * stored refresh token the server no longer accepts, a connection flagged for reauthorization.
 * With `killLeaseHolder`, the process holding the lease is killed with SIGKILL in the middle
 * of the first refresh, and the others must take over when its lease expires.
 *
 * @example
 * ```ts
 * // race-store.mjs: export const createStore = () => new RedisTokenStore({ client: new Redis() })
 * const report = await runRefreshRace({ storeModule: new URL('./race-store.mjs', import.meta.url) })
 * expect(report.problems).toEqual([])
 * ```
 */
export async function runRefreshRace(options: RefreshRaceOptions): Promise<RefreshRaceReport> {
  const stop: RaceStop | undefined =
    options.stop ?? (options.killLeaseHolder === true ? 'before-request' : undefined)
  const stopRounds = stop === undefined ? 0 : (options.stopRounds ?? 1)
  const { store, imported, server, config, key, latency } = await prepare(options, stop)
  const stopper = new Stopper(stop, latency)
  const spawn = () => spawnRacer(config, stopper.onEvent)
  const racers: Racer[] = []
  const rounds: RefreshRaceRound[] = []
  const problems: string[] = []
  try {
    racers.push(...(await Promise.all(Array.from({ length: options.processes ?? 8 }, spawn))))
    for (let round = 1; round <= (options.expiries ?? 5); round++) {
      stopper.begin(round <= stopRounds)
      await expire(store, key, round * ROUND_MS)
      const [entry, facts] = await runRound(round, { options, store, server, key, racers, stopper })
      rounds.push(entry)
      problems.push(...roundProblems(entry, facts, stop, stopper))
      // Keep the number of processes: a stopped one is replaced.
      for (const [index, racer] of racers.entries()) {
        if (racer.dead || racer.terminating) {
          await exited(racer)
          racers[index] = await spawn()
        }
      }
    }
    if (server.counters.reuse > 0)
      problems.push(`a spent refresh token was presented ${server.counters.reuse} times`)
  } finally {
    await shutDown(racers)
    await server.close()
    await imported.closeStore?.(store)
  }
  return { rounds, problems }
}

/** The store, the strict token server, a connection to race on, and the processes' config. */
async function prepare(options: RefreshRaceOptions, stop: RaceStop | undefined) {
  const storeModule = moduleUrl(options.storeModule)
  const imported = (await import(storeModule)) as {
    createStore(): TokenStore | Promise<TokenStore>
    closeStore?(store: TokenStore): unknown
  }
  if (typeof imported.createStore !== 'function') {
    throw new ConfigError(`runRefreshRace: ${storeModule} must export createStore().`)
  }
  const store = await imported.createStore()
  const server = await startTokenServer(options.server)
  const latency = options.refreshLatencyMs ?? 100
  server.setLatency(latency, 'success')
  const key = `race:${randomBytes(6).toString('hex')}`
  const granted = server.grant(key)
  await store.set(key, {
    accessToken: granted.access_token,
    refreshToken: granted.refresh_token,
    tokenType: 'bearer',
    expiresAt: Date.now() + 7_200_000,
    obtainedAt: Date.now(),
  })
  const config: ChildConfig = {
    authUrl: server.url,
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    redirectUri: server.redirectUri,
    key,
    callers: options.callers ?? 25,
    storeModule,
    leaseTtlMs: options.leaseTtlMs ?? (stop === undefined ? 60_000 : 3_000),
  }
  return { store, imported, server, config, key, latency }
}

interface Round {
  options: RefreshRaceOptions
  store: TokenStore
  server: TokenServer
  key: string
  racers: Racer[]
  stopper: Stopper
}

/** What a round's report leaves out and its checks need. */
interface RoundFacts {
  /** A caller got the stored access token. */
  tokenSeen: boolean
  /** The stored record is flagged for reauthorization. */
  reauthorizationRequired: boolean
}

/** One expiry: every live process's callers ask at once; what came of it. */
async function runRound(round: number, r: Round): Promise<[RefreshRaceRound, RoundFacts]> {
  const before = { ...r.server.counters }
  const started = performance.now()
  const live = r.racers.filter((racer) => !racer.dead && !racer.terminating)
  const hold = r.stopper.hold
  const cut = r.options.cutStoreAtWrite === true && round === 1
  const answers = live.map(
    (racer) =>
      new Promise<string[]>((resolve) => {
        racer.done = resolve
        racer.child.send({
          type: 'go',
          hold,
          cut,
          offset: round * ROUND_MS,
        } satisfies ParentMessage)
      }),
  )
  const timeoutMs = r.options.roundTimeoutMs ?? 30_000
  const results = (await withTimeout(Promise.all(answers), timeoutMs, `round ${round}`)).flat()
  await r.stopper.settled()
  const stored = (await r.store.get(r.key)) as TokenRecord
  const facts: RoundFacts = {
    tokenSeen: results.includes(stored.accessToken),
    reauthorizationRequired: stored.reauthorizationRequired === true,
  }
  const entry: RefreshRaceRound = {
    round,
    refreshRequests: r.server.counters.refresh - before.refresh,
    refreshes: r.server.counters.refreshOk - before.refreshOk,
    callers: results.length,
    errors: results.filter((result) => result.startsWith('error:')),
    tokens: new Set(results.filter((result) => !result.startsWith('error:'))).size,
    killed: r.stopper.round && r.stopper.stopped,
    lost:
      stored.reauthorizationRequired === true || !r.server.isRefreshTokenValid(stored.refreshToken),
    durationMs: Math.round(performance.now() - started),
  }
  return [entry, facts]
}

/** Every promise a round broke. */
function roundProblems(
  entry: RefreshRaceRound,
  facts: RoundFacts,
  stop: RaceStop | undefined,
  stopper: Stopper,
): string[] {
  const problems: string[] = []
  const at = `round ${entry.round}`
  // A holder stopped after the server spent the token makes the next holder present it
  // again: a second request, answered within a grace period.
  const expected = entry.killed && stop !== 'before-request' ? [1, 2] : [1]
  if (!expected.includes(entry.refreshRequests))
    problems.push(`${at}: ${entry.refreshRequests} refresh requests, not ${expected.join(' or ')}`)
  if (!expected.includes(entry.refreshes))
    problems.push(`${at}: ${entry.refreshes} refreshes, not ${expected.join(' or ')}`)
  if (entry.errors.length > 0) {
    const kinds = [...new Set(entry.errors)].join(', ')
    problems.push(`${at}: ${entry.errors.length} callers failed (${kinds})`)
  }
  if (entry.tokens !== 1 || !facts.tokenSeen)
    problems.push(`${at}: callers got ${entry.tokens} distinct tokens, not the stored one`)
  if (facts.reauthorizationRequired) problems.push(`${at}: the connection was flagged lost`)
  else if (entry.lost)
    problems.push(`${at}: the stored refresh token is no longer accepted: the connection is lost`)
  if (stopper.round && !stopper.stopped)
    problems.push(`${at}: no process took the lease to be stopped`)
  return problems
}
