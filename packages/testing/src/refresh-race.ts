import { type ChildProcess, fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import type { TokenRecord, TokenStore } from '@scheduling-kit/core'
import { startTokenServer } from '@scheduling-kit/fake-auth'

export interface RefreshRaceOptions {
  /**
   * A module every process imports, as a path or `file:` URL. Its `createStore()` export (sync
   * or async) makes the store under test, connected to the shared server; an optional
   * `closeStore(store)` export closes the parent's when the race is over.
   */
  storeModule: string | URL
  /** OS processes, each with its own token manager and store client. Default 8. */
  processes?: number
  /** Callers per process asking for the token at once. Default 25. */
  callers?: number
  /** Times the token expires and everyone asks again. Default 5. */
  expiries?: number
  /**
   * In the first round, kill the process that took the lease with SIGKILL, just before its
   * token request: the others must go on once the lease expires.
   */
  killLeaseHolder?: boolean
  /**
   * The token managers' lease. Default 60 s, or 5 s with `killLeaseHolder`: the others wait
   * that long for the killed holder's lease, and every refresh must end within it (1 s was
   * overrun on a loaded 2-core machine: a second refresh with the spent token lost the grant).
   */
  leaseTtlMs?: number
  /** How long the token endpoint takes to answer a refresh, after it spent the old token. Default 100 ms. */
  refreshLatencyMs?: number
  /** How long one round may take before it is reported as hung. Default 30 s. */
  roundTimeoutMs?: number
}

/** What one expiry brought. */
export interface RefreshRaceRound {
  round: number
  /** Refresh requests the token endpoint received. */
  refreshRequests: number
  /** Refreshes it answered with new tokens. */
  refreshes: number
  /** Callers that got an answer (a killed process's callers get none). */
  callers: number
  /** Each failed caller's error code. */
  errors: string[]
  /** Distinct access tokens the callers got. */
  tokens: number
  /** Whether a process was killed in this round. */
  killed: boolean
  durationMs: number
}

export interface RefreshRaceReport {
  rounds: RefreshRaceRound[]
  /** Every promise the race checks that did not hold, in words; empty when all held. */
  problems: string[]
}

/** @internal The configuration a race process gets. */
export interface ChildConfig {
  authUrl: string
  clientId: string
  clientSecret: string
  redirectUri: string
  key: string
  callers: number
  storeModule: string
  leaseTtlMs: number
}
/** @internal */
export type ParentMessage = { type: 'go'; hold: boolean } | { type: 'proceed' } | { type: 'exit' }
/** @internal */
export type ChildMessage =
  | { type: 'ready' }
  | { type: 'refreshing' }
  | { type: 'done'; results: string[] }

interface Racer {
  child: ChildProcess
  dead: boolean
  done?: (results: string[]) => void
}

function moduleUrl(module: string | URL): string {
  if (module instanceof URL) return module.href
  return module.startsWith('file:') ? module : pathToFileURL(module).href
}

function spawnRacer(config: ChildConfig, onRefreshing: (racer: Racer) => void): Promise<Racer> {
  const child = fork(new URL('./race-child.js', import.meta.url), [JSON.stringify(config)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const racer: Racer = { child, dead: false }
  return new Promise<Racer>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('a race process did not start in 30 s')),
      30_000,
    )
    child.once('exit', (code, signal) => {
      racer.dead = true
      clearTimeout(timer)
      reject(new Error(`a race process exited (${code ?? signal}) before it was ready`))
      // Mid-round, a process that died on its own (not killed by the race) fails its callers.
      racer.done?.([`error:process_exited_${code ?? signal}`])
    })
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') {
        clearTimeout(timer)
        resolve(racer)
      } else if (message.type === 'refreshing') onRefreshing(racer)
      else racer.done?.(message.results)
    })
  })
}

async function expire(store: TokenStore, key: string): Promise<void> {
  const { version: _, ...record } = (await store.get(key)) as TokenRecord
  await store.set(key, {
    ...record,
    expiresAt: Date.now() - 1_000,
    obtainedAt: Date.now() - 7_201_000,
  })
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

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
  const processes = options.processes ?? 8
  const callers = options.callers ?? 25
  const expiries = options.expiries ?? 5
  const kill = options.killLeaseHolder === true
  const storeModule = moduleUrl(options.storeModule)
  const imported = (await import(storeModule)) as {
    createStore(): TokenStore | Promise<TokenStore>
    closeStore?(store: TokenStore): unknown
  }
  if (typeof imported.createStore !== 'function') {
    throw new TypeError(`runRefreshRace: ${storeModule} must export createStore().`)
  }
  const store = await imported.createStore()
  const server = await startTokenServer()
  server.setLatency(options.refreshLatencyMs ?? 100, 'success')
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
    callers,
    storeModule,
    leaseTtlMs: options.leaseTtlMs ?? (kill ? 5_000 : 60_000),
  }
  let killRound = false
  let killed = false
  const onRefreshing = (racer: Racer) => {
    if (killRound && !killed) {
      killed = true
      racer.dead = true
      racer.child.kill('SIGKILL')
      racer.done?.([])
    } else racer.child.send({ type: 'proceed' } satisfies ParentMessage)
  }
  const racers: Racer[] = []
  const rounds: RefreshRaceRound[] = []
  const problems: string[] = []
  try {
    racers.push(
      ...(await Promise.all(
        Array.from({ length: processes }, () => spawnRacer(config, onRefreshing)),
      )),
    )
    for (let round = 1; round <= expiries; round++) {
      killRound = kill && round === 1
      await expire(store, key)
      const before = { ...server.counters }
      const started = performance.now()
      const live = racers.filter((r) => !r.dead)
      const answers = live.map(
        (racer) =>
          new Promise<string[]>((resolve) => {
            racer.done = resolve
            racer.child.send({ type: 'go', hold: killRound } satisfies ParentMessage)
          }),
      )
      const results = (
        await withTimeout(Promise.all(answers), options.roundTimeoutMs ?? 30_000, `round ${round}`)
      ).flat()
      const errors = results.filter((r) => r.startsWith('error:'))
      const tokens = new Set(results.filter((r) => !r.startsWith('error:')))
      const entry: RefreshRaceRound = {
        round,
        refreshRequests: server.counters.refresh - before.refresh,
        refreshes: server.counters.refreshOk - before.refreshOk,
        callers: results.length,
        errors,
        tokens: tokens.size,
        killed: killRound && killed,
        durationMs: Math.round(performance.now() - started),
      }
      rounds.push(entry)
      const stored = (await store.get(key)) as TokenRecord
      const at = `round ${round}`
      if (entry.refreshRequests !== 1)
        problems.push(`${at}: ${entry.refreshRequests} refresh requests, not 1`)
      if (entry.refreshes !== 1) problems.push(`${at}: ${entry.refreshes} refreshes, not 1`)
      if (errors.length > 0)
        problems.push(`${at}: ${errors.length} callers failed (${[...new Set(errors)].join(', ')})`)
      if (tokens.size !== 1 || !tokens.has(stored.accessToken))
        problems.push(`${at}: callers got ${tokens.size} distinct tokens, not the stored one`)
      if (stored.reauthorizationRequired) problems.push(`${at}: the connection was flagged lost`)
      if (!server.isRefreshTokenValid(stored.refreshToken))
        problems.push(
          `${at}: the stored refresh token is no longer accepted: the connection is lost`,
        )
      if (killRound && !killed) problems.push(`${at}: no process took the lease to be killed`)
    }
    if (server.counters.reuse > 0)
      problems.push(`a spent refresh token was presented ${server.counters.reuse} times`)
  } finally {
    for (const racer of racers) {
      if (!racer.dead) racer.child.send({ type: 'exit' } satisfies ParentMessage)
    }
    await Promise.all(
      racers.map(
        (racer) =>
          new Promise<void>((resolve) => {
            if (racer.child.exitCode !== null || racer.child.signalCode !== null) return resolve()
            const timer = setTimeout(() => racer.child.kill('SIGKILL'), 5_000)
            racer.child.once('exit', () => {
              clearTimeout(timer)
              resolve()
            })
          }),
      ),
    )
    await server.close()
    await imported.closeStore?.(store)
  }
  return { rounds, problems }
}
