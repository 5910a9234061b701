import { type ChildProcess, fork } from 'node:child_process'
import { ConfigError, type SweepStore, type TokenStore } from '@scheduling-kit/core'
import { PHASES, phaseOf } from '@scheduling-kit/core/store'
import { moduleUrl } from './race-racers.js'
import { startFakeSchedulingService } from './service.js'

// Refresh ahead through an outage of the token endpoint, in several OS processes sharing the
// stores under test, some SIGKILLed at random instants while it lasts (each replaced): the
// failed refreshes wait for their next try in the shared store, so every connection whose turn
// came during the outage is refreshed, by whichever process, before its next turn; and each
// connection is asked of the endpoint at most twice while it is down (once more for a try a
// killed process had under way, or whose step it left unfinished).

export interface RefreshAheadOutageOptions {
  /**
   * A module exporting `createStores()`, giving `{ tokens, sweeps }`: the token store and the
   * sweep store (with its `RetryStore` methods) every process shares, over private tables or
   * prefixes for this run.
   */
  storeModule: string | URL
  /** OS processes at once. Default 3. */
  processes?: number
  /** Connections. Default 120. */
  accounts?: number
  /**
   * Refresh ahead's period (`everyMs`), in ms. Default 24 000: the processes' real clocks judge
   * the promises, and a busy machine stretches each step by up to a second.
   */
  everyMs?: number
  /** How long the token endpoint is down from the start, in ms. Default 0.6 of `everyMs`. */
  outageMs?: number
  /** Processes SIGKILLed (at random instants of the outage), each replaced. Default 2. */
  kills?: number
}

/** What the run saw, and every broken promise. */
export interface RefreshAheadOutageReport {
  /** Token requests during the outage, per connection asked. */
  callsInOutage: Record<string, number>
  /** Connections each killed process had a try of under way, or in its unfinished step. */
  killedWith: string[]
  /** When each connection was refreshed after the outage, ms after the start. */
  refreshedAt: Record<string, number>
  problems: string[]
}

/** The stores a process of the run builds. */
export interface OutageStores {
  tokens: TokenStore
  sweeps: SweepStore
  /** Ends the stores' connections (the run calls it on its own stores when it ends). */
  close?(): Promise<void>
}

/** @internal What a process of the run is given. */
export interface OutageChild {
  storeModule: string
  authUrl: string
  clientId: string
  clientSecret: string
  accounts: number
  everyMs: number
  leaseMs: number
  stepMs: number
}

/** @internal What a process of the run tells. */
export type OutageMessage =
  | { ready: true }
  | { stepping: true }
  | { trying: string }
  | { refreshed: string; at: number }

/** One process of the run, as the parent follows it. */
interface Follower {
  child: ChildProcess
  /** Connections tried since its last step began (what a kill leaves unfinished). */
  touched: Set<string>
  exited: Promise<unknown>
}

/**
 * Runs the outage and reports. The promises are judged on each connection's own schedule
 * (its first turn after the start, from `phaseOf`), with the processes' real clocks.
 *
 * @example
 * ```ts
 * // stores.mjs: export const createStores = () => ({ tokens: new MyTokenStore(), sweeps: new MySweepStore() })
 * const report = await runRefreshAheadOutage({ storeModule: new URL('./stores.mjs', import.meta.url) })
 * expect(report.problems).toEqual([])
 * ```
 */
export async function runRefreshAheadOutage(
  options: RefreshAheadOutageOptions,
): Promise<RefreshAheadOutageReport> {
  if (options?.storeModule === undefined)
    throw new ConfigError(
      'runRefreshAheadOutage: storeModule must name a module exporting createStores().',
    )
  const everyMs = options.everyMs ?? 24_000
  const run = {
    processes: options.processes ?? 3,
    accounts: options.accounts ?? 120,
    everyMs,
    outageMs: options.outageMs ?? 0.6 * everyMs,
    kills: options.kills ?? 2,
  }
  const storeModule = moduleUrl(options.storeModule)
  const stores = (await import(storeModule)) as { createStores(): Promise<OutageStores> }
  const made = await stores.createStores()
  const { tokens, sweeps } = made
  const service = await startFakeSchedulingService({ reuseGraceMs: 60_000 })
  const followers: Follower[] = []
  try {
    const owners = await connect(service, tokens, run.accounts)
    const start = Date.now()
    for (let shard = 0; shard < 16; shard++)
      await sweeps.setCheckpoint(`refresh:${shard}`, start, undefined)
    service.auth.setDown(503)
    const refreshedAt = new Map<string, number>()
    const config: OutageChild = {
      storeModule,
      authUrl: service.authUrl,
      clientId: service.clientId,
      clientSecret: service.clientSecret,
      accounts: run.accounts,
      everyMs,
      // A held try is taken under the shards' lease: one that outlasts it (a process stalled
      // past it on a busy machine) may be taken again by another; a kill holds its shards for
      // as long. An eighth of the period weighs the two.
      leaseMs: Math.round(everyMs / 8),
      stepMs: 50,
    }
    const spawn = () => {
      const follower = follow(config, (key, at) => {
        if (at >= start + run.outageMs && !refreshedAt.has(key)) refreshedAt.set(key, at - start)
      })
      followers.push(follower)
      return follower
    }
    await Promise.all(Array.from({ length: run.processes }, spawn).map(ready))
    const killedWith = await killDuring(followers, spawn, start, run)
    service.auth.setDown(undefined)
    const keys = [...owners.values()]
    const deadline = start + 2 * everyMs + run.outageMs
    while (refreshedAt.size < keys.length && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50))
    return judge(service.auth.tokenRequests, owners, refreshedAt, killedWith, { start, ...run })
  } finally {
    for (const f of followers) f.child.kill('SIGKILL')
    await Promise.all(followers.map((f) => f.exited))
    await service.close()
    await made.close?.()
  }
}

/**
 * The run's report: token requests in the outage per connection (at most 2, 3 for one a killed
 * process left unfinished), and each connection refreshed by its next turn (its first turn
 * after the start, from `phaseOf`, plus a period).
 */
function judge(
  requests: ReadonlyArray<{ at: number; form: Record<string, string> }>,
  owners: Map<string, string>,
  refreshedAt: Map<string, number>,
  killedWith: string[],
  run: { start: number; everyMs: number; outageMs: number },
): RefreshAheadOutageReport {
  const { start, everyMs, outageMs } = run
  const firstTurn = (key: string) =>
    (((Math.floor((phaseOf(key) / PHASES) * everyMs) - start) % everyMs) + everyMs) % everyMs
  const calls: Record<string, number> = {}
  for (const r of requests)
    if (r.at >= start && r.at < start + outageMs && r.form.refresh_token !== undefined) {
      const key = owners.get(r.form.refresh_token)
      if (key !== undefined) calls[key] = (calls[key] ?? 0) + 1
    }
  const problems: string[] = []
  for (const key of owners.values()) {
    const at = refreshedAt.get(key)
    const bound = firstTurn(key) + everyMs
    if (at === undefined) problems.push(`${key} was never refreshed after the outage`)
    else if (at > bound)
      problems.push(`${key} refreshed ${at} ms after the start, past its next turn (${bound})`)
    const allowed = killedWith.includes(key) ? 3 : 2
    if ((calls[key] ?? 0) > allowed)
      problems.push(`${key} asked ${calls[key]} times in the outage (at most ${allowed})`)
  }
  return {
    callsInOutage: calls,
    killedWith,
    refreshedAt: Object.fromEntries(refreshedAt),
    problems,
  }
}

/** Connects `accounts` accounts: tokens obtained long ago. Their refresh tokens' owners. */
async function connect(
  service: Awaited<ReturnType<typeof startFakeSchedulingService>>,
  tokens: TokenStore,
  accounts: number,
): Promise<Map<string, string>> {
  const owners = new Map<string, string>()
  const connectedAt = Date.now() - 600_000
  for (let i = 0; i < accounts; i++) {
    const key = `acct_${i}`
    const granted = service.auth.grant(key)
    owners.set(granted.refresh_token, key)
    await tokens.set(key, {
      accessToken: granted.access_token,
      refreshToken: granted.refresh_token,
      tokenType: 'bearer',
      expiresAt: connectedAt + 7_200_000,
      obtainedAt: connectedAt,
      account: { id: key },
    })
  }
  return owners
}

/** Forks one process of the run and follows what it tells. */
function follow(config: OutageChild, refreshed: (key: string, at: number) => void): Follower {
  const child = fork(new URL('./outage-child.js', import.meta.url), [JSON.stringify(config)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const follower: Follower = {
    child,
    touched: new Set(),
    exited: new Promise((resolve) => child.on('exit', resolve)),
  }
  child.on('message', (m: OutageMessage) => {
    if ('stepping' in m) follower.touched.clear()
    else if ('trying' in m) follower.touched.add(m.trying)
    else if ('refreshed' in m) refreshed(m.refreshed, m.at)
  })
  return follower
}

/** Resolves once the process said it is ready; fails if it ends first. */
function ready(f: Follower): Promise<void> {
  return new Promise((resolve, reject) => {
    f.child.on('message', (m: OutageMessage) => 'ready' in m && resolve())
    void f.exited.then(() => reject(new Error('an outage process ended before it was ready')))
  })
}

/**
 * SIGKILLs `kills` live processes at random instants of the outage, each replaced at once;
 * returns what the killed ones left unfinished. Waits out the outage.
 */
async function killDuring(
  followers: Follower[],
  spawn: () => Follower,
  start: number,
  run: { outageMs: number; kills: number },
): Promise<string[]> {
  const instants = Array.from({ length: run.kills }, () => Math.random() * run.outageMs).sort(
    (a, b) => a - b,
  )
  const left: string[] = []
  for (const instant of instants) {
    const wait = start + instant - Date.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    const live = followers.filter((f) => f.child.exitCode === null && !f.child.killed)
    const victim = live[Math.floor(Math.random() * live.length)]!
    left.push(...victim.touched)
    victim.child.kill('SIGKILL')
    await ready(spawn())
  }
  const rest = start + run.outageMs - Date.now()
  if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest))
  return left
}
