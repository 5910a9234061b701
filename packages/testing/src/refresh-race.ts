import { type ChildProcess, fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import type { TokenRecord, TokenStore } from '@scheduling-kit/core'
import { type AuthServiceOptions, startTokenServer } from '@scheduling-kit/fake-auth'

/**
 * When the lease holder of a round is stopped:
 * - `before-request`: SIGKILL with the lease taken and the token request not yet sent.
 * - `random`: SIGKILL at a random instant from just before the request to just after the
 *   answer (the server spends the refresh token on arrival).
 * - `after-answer`: SIGKILL with the answer read and the new tokens not yet written: the
 *   crash window. A strict server has then spent the only valid refresh token.
 * - `terminate`: SIGTERM at a random instant; the process closes its token manager
 *   (`close()`) and exits, as the README's shutdown recipe does.
 */
export type RaceStop = 'before-request' | 'random' | 'after-answer' | 'terminate'

export interface RefreshRaceOptions {
  /**
   * A module every process imports, as a path or `file:` URL. Its `createStore()` export (sync
   * or async) makes the store under test, connected to the shared server; an optional
   * `closeStore(store)` export closes the parent's when the race is over; an optional
   * `cutConnection(store)` cuts a store's connection to its server (for `cutStoreAtWrite`).
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
   * token request: the others must go on once the lease expires. Same as
   * `stop: 'before-request'`, `stopRounds: 1`.
   */
  killLeaseHolder?: boolean
  /** Stop the lease holder of each of the first `stopRounds` rounds, this way. */
  stop?: RaceStop
  /** How many rounds (the first ones) stop their lease holder. Default 1 when `stop` is set. */
  stopRounds?: number
  /**
   * In the first round, the lease holder's first store write after the token endpoint's
   * answer finds its connection cut: the module's `cutConnection(store)` runs, and the write
   * throws. The new tokens must still land.
   */
  cutStoreAtWrite?: boolean
  /** The token endpoint's behaviour (`reuseGraceMs`, `reuseRevokesFamily`). Default: strict. */
  server?: Pick<AuthServiceOptions, 'reuseGraceMs' | 'reuseRevokesFamily'>
  /**
   * The token managers' lease. Default 60 s, or 3 s when a holder is stopped: the others wait
   * that long for a killed holder's lease (a live holder renews it every third of that).
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
  /** Whether a process was stopped (killed or terminated) in this round. */
  killed: boolean
  /** Whether the connection was lost at the round's end: its stored refresh token is refused. */
  lost: boolean
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
/** @internal What the lease holder of a round does before its token request, and after the answer. */
export type Hold = 'none' | 'before-request' | 'after-answer' | 'report'
/** @internal */
export type ParentMessage =
  | { type: 'go'; hold: Hold; cut: boolean }
  | { type: 'proceed' }
  | { type: 'exit' }
/** @internal */
export type ChildMessage =
  | { type: 'ready' }
  | { type: 'refreshing' }
  | { type: 'answered' }
  | { type: 'done'; results: string[] }

interface Racer {
  child: ChildProcess
  dead: boolean
  /** Sent SIGTERM: its callers' answers still count, it exits after. */
  terminating?: boolean
  done?: (results: string[]) => void
}

function moduleUrl(module: string | URL): string {
  if (module instanceof URL) return module.href
  return module.startsWith('file:') ? module : pathToFileURL(module).href
}

function spawnRacer(
  config: ChildConfig,
  onEvent: (racer: Racer, event: 'refreshing' | 'answered') => void,
): Promise<Racer> {
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
      if (!racer.terminating) racer.done?.([`error:process_exited_${code ?? signal}`])
      else racer.done?.([])
    })
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') {
        clearTimeout(timer)
        resolve(racer)
      } else if (message.type === 'refreshing' || message.type === 'answered')
        onEvent(racer, message.type)
      else {
        const done = racer.done
        racer.done = undefined
        done?.(message.results)
      }
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
  const stop: RaceStop | undefined =
    options.stop ?? (options.killLeaseHolder === true ? 'before-request' : undefined)
  const stopRounds = stop === undefined ? 0 : (options.stopRounds ?? 1)
  const storeModule = moduleUrl(options.storeModule)
  const imported = (await import(storeModule)) as {
    createStore(): TokenStore | Promise<TokenStore>
    closeStore?(store: TokenStore): unknown
  }
  if (typeof imported.createStore !== 'function') {
    throw new TypeError(`runRefreshRace: ${storeModule} must export createStore().`)
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
    callers,
    storeModule,
    leaseTtlMs: options.leaseTtlMs ?? (stop === undefined ? 60_000 : 3_000),
  }
  let stopRound = false
  let stopped = false
  const halt = (racer: Racer) => {
    stopped = true
    if (stop === 'terminate') {
      racer.terminating = true
      racer.child.kill('SIGTERM')
      return
    }
    racer.dead = true
    racer.child.kill('SIGKILL')
    const done = racer.done
    racer.done = undefined
    done?.([])
  }
  const onEvent = (racer: Racer, event: 'refreshing' | 'answered') => {
    const proceed = () => racer.child.send({ type: 'proceed' } satisfies ParentMessage)
    if (!stopRound || stopped) return proceed()
    if (stop === 'before-request' && event === 'refreshing') return halt(racer)
    if (stop === 'after-answer' && event === 'answered') return halt(racer)
    if ((stop === 'random' || stop === 'terminate') && event === 'refreshing') {
      // Anywhere from before the request leaves to a little after the answer arrives.
      setTimeout(() => halt(racer), Math.random() * (latency + 40))
    }
    proceed()
  }
  const spawn = () => spawnRacer(config, onEvent)
  const racers: Racer[] = []
  const rounds: RefreshRaceRound[] = []
  const problems: string[] = []
  try {
    racers.push(...(await Promise.all(Array.from({ length: processes }, spawn))))
    for (let round = 1; round <= expiries; round++) {
      stopRound = round <= stopRounds
      stopped = false
      await expire(store, key)
      const before = { ...server.counters }
      const started = performance.now()
      const live = racers.filter((r) => !r.dead && !r.terminating)
      const hold: Hold = !stopRound
        ? 'none'
        : stop === 'before-request'
          ? 'before-request'
          : stop === 'after-answer'
            ? 'after-answer'
            : 'report'
      const cut = options.cutStoreAtWrite === true && round === 1
      const answers = live.map(
        (racer) =>
          new Promise<string[]>((resolve) => {
            racer.done = resolve
            racer.child.send({ type: 'go', hold, cut } satisfies ParentMessage)
          }),
      )
      const results = (
        await withTimeout(Promise.all(answers), options.roundTimeoutMs ?? 30_000, `round ${round}`)
      ).flat()
      const errors = results.filter((r) => r.startsWith('error:'))
      const tokens = new Set(results.filter((r) => !r.startsWith('error:')))
      const stored = (await store.get(key)) as TokenRecord
      const entry: RefreshRaceRound = {
        round,
        refreshRequests: server.counters.refresh - before.refresh,
        refreshes: server.counters.refreshOk - before.refreshOk,
        callers: results.length,
        errors,
        tokens: tokens.size,
        killed: stopRound && stopped,
        lost:
          stored.reauthorizationRequired === true ||
          !server.isRefreshTokenValid(stored.refreshToken),
        durationMs: Math.round(performance.now() - started),
      }
      rounds.push(entry)
      const at = `round ${round}`
      // A holder stopped after the server spent the token makes the next holder present it
      // again: a second request, answered within a grace period.
      const expected = entry.killed && stop !== 'before-request' ? [1, 2] : [1]
      if (!expected.includes(entry.refreshRequests))
        problems.push(
          `${at}: ${entry.refreshRequests} refresh requests, not ${expected.join(' or ')}`,
        )
      if (!expected.includes(entry.refreshes))
        problems.push(`${at}: ${entry.refreshes} refreshes, not ${expected.join(' or ')}`)
      if (errors.length > 0)
        problems.push(`${at}: ${errors.length} callers failed (${[...new Set(errors)].join(', ')})`)
      if (tokens.size !== 1 || !tokens.has(stored.accessToken))
        problems.push(`${at}: callers got ${tokens.size} distinct tokens, not the stored one`)
      if (stored.reauthorizationRequired) problems.push(`${at}: the connection was flagged lost`)
      else if (entry.lost)
        problems.push(
          `${at}: the stored refresh token is no longer accepted: the connection is lost`,
        )
      if (stopRound && !stopped) problems.push(`${at}: no process took the lease to be stopped`)
      // Keep the number of processes: a stopped one is replaced.
      for (const [index, racer] of racers.entries()) {
        if (racer.dead || racer.terminating) {
          await new Promise<void>((resolve) => {
            if (racer.child.exitCode !== null || racer.child.signalCode !== null) return resolve()
            racer.child.once('exit', () => resolve())
          })
          racers[index] = await spawn()
        }
      }
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
