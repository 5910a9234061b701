import { ConfigError, isSchedulingError } from '../errors/errors.js'
import { notify } from '../log.js'
import type { RateCap } from '../sweep/rate-cap.js'
import {
  askedWaitMs,
  isRetryStore,
  MemoryRetries,
  nextTryAt,
  type RetryStore,
} from '../sweep/retries.js'
import { lastTurn, type PhaseRange, slotOf } from '../sweep/schedule.js'
import { eachOf, type StepOptions, stepCounts, stepShards } from '../sweep/step.js'
import type { SweepStore } from '../sweep/store.js'
import { wholeNumber } from '../validate.js'
import type { ConnectionChange } from './connection.js'
import type { TokenManager } from './contract.js'

// Refresh ahead, off the request path: each connection's token is refreshed once every
// `everyMs`, at its own time in that period (the rolling schedule of `sweep/step.ts`, the
// connections spread by a hash of their key), through the token manager's own refresh: one
// refresh across processes (its leases), never over a token another process refreshed since.
// With `everyMs` below the access token's life, no request ever waits on a refresh, however
// many accounts connected in the same minute, and idle connections stay alive. A refresh that
// fails waits for its next try in the shared store (`sweep/retries.ts`), backing off per
// connection as long as the token endpoint asks.

const MINUTE = 60_000
/** The held tries' task name in the store. */
const RETRIES = 'refresh'
/** The most held tries a step takes (the earliest due first); the rest wait for the next. */
const RETRIES_PER_STEP = 1_000

export interface RefreshAheadOptions {
  /**
   * The connected keys (the subscriptions' `keys`, or your own list): with `phases`, at least
   * those whose phase (`phaseOf`) falls in it, so a step reads only its window's; a function
   * that ignores it gives them all, and each step passes over those not due.
   */
  keys: (phases?: PhaseRange) => AsyncIterable<string>
  /**
   * The shards' leases and checkpoints, shared by the instances (a sweep's store serves), and
   * the failed refreshes' next tries when it keeps them (`RetryStore`: the toolkit's sweep
   * stores do); else those wait in the process that failed.
   */
  store: SweepStore
  /**
   * Each connection is refreshed once in this period, in ms: below the access token's life
   * less the manager's refresh margin (a 2-hour token is refreshed on the request path in its
   * last 5 minutes). Default 100 minutes.
   */
  everyMs?: number
  /** Shards, each stepped by one instance at a time. Default 16. */
  shards?: number
  /**
   * The most of the period one step covers, in ms (default a hundredth): a step killed halfway
   * is done again by the next, so at most that share of the connections is asked twice. A
   * step that takes longer than this falls behind at any cadence: raise it for a short period
   * (at most a quarter of `everyMs`).
   */
  maxStepMs?: number
  /** A shard's lease, renewed while its step runs, in ms. Default 60 000. */
  leaseTtlMs?: number
  /** Refreshes at once. Default 4. */
  concurrency?: number
  /**
   * Spaces the token calls (`new RateCap({ perSecond })`, the app's own for its token endpoint,
   * or one shared with other work of this process): each refresh waits its turn. Default none.
   */
  rateCap?: Pick<RateCap, 'acquire'>
  /** Clock in ms. Default `Date.now`: the token manager's clock, when it was given one. */
  now?: () => number
  /**
   * Told when a connection's refresh starts failing (`refresh_failing`, once) and when it is
   * refreshed again (`refresh_recovered`); a refused refresh token is told by the token manager
   * (`needs_reauth`). `createScheduling` passes its own.
   */
  onConnectionChange?: (change: ConnectionChange) => void
}

/**
 * The most one step covers: a hundredth of the period by default, and at most a quarter (a
 * connection refreshed within two steps of its turn is left as fresh: a larger step would
 * leave it at every turn).
 */
function stepOf(who: string, value: unknown, everyMs: number): number {
  const most = Math.floor(everyMs / 4)
  const maxStepMs = wholeNumber(who, 'maxStepMs', value, Math.ceil(everyMs / 100), { unit: 'ms' })
  if (value !== undefined && maxStepMs > most)
    throw new ConfigError(`${who}: maxStepMs must be at most a quarter of everyMs (${most} ms).`)
  return maxStepMs
}

/** What one `step()` did. */
export interface RefreshAheadReport {
  shards: number
  busyShards: number
  /** Connections whose turn came; of them, refreshed, and left (refreshed elsewhere in the last two steps). */
  due: number
  refreshed: number
  fresh: number
  /**
   * Connections that need their owner to sign in again, that have no tokens, and that failed:
   * each failed one's next try is held in the store, a twentieth of `everyMs` later after its
   * first failure, 0.6 of it after each further one, and never before the token endpoint's
   * `Retry-After` (an endpoint down for an hour is asked at most twice per connection in it).
   */
  reauthorizationRequired: string[]
  notConnected: string[]
  failed: string[]
  /** How far behind now the furthest shard is, in ms (0: caught up). */
  behindMs: number
  ms: number
}

/**
 * Refreshes every connection's token ahead of its expiry, spread over `everyMs`: call `step()`
 * every minute or so, on every instance.
 *
 * @example
 * ```ts
 * const ahead = new RefreshAhead(tokens, { keys: (p) => subscriptions.keys(p), store: sweepStore })
 * setInterval(() => void ahead.step(), 60_000).unref()
 * ```
 */
export class RefreshAhead {
  readonly #everyMs: number
  readonly #settings: {
    shards: number
    maxStepMs: number
    leaseTtlMs: number
    concurrency: number
  }
  readonly #now: () => number
  /** Where failed refreshes wait for their next try: the store's, or this process's. */
  readonly #retries: RetryStore

  constructor(
    readonly tokens: Pick<TokenManager, 'getRecord'>,
    readonly options: RefreshAheadOptions,
  ) {
    const who = 'RefreshAhead'
    if (typeof tokens?.getRecord !== 'function')
      throw new ConfigError(`${who}: pass the token manager (createTokenManager).`)
    if (typeof options?.keys !== 'function')
      throw new ConfigError(`${who}: keys must be a function giving the connected keys.`)
    const store = options.store as Partial<SweepStore> | undefined
    if (typeof store?.checkpoint !== 'function' || typeof store.acquireLease !== 'function')
      throw new ConfigError(
        `${who}: store must be a SweepStore (MemorySweepStore, or a shared one).`,
      )
    this.#everyMs = wholeNumber(who, 'everyMs', options.everyMs, 100 * MINUTE, { unit: 'ms' })
    this.#settings = {
      shards: wholeNumber(who, 'shards', options.shards, 16),
      maxStepMs: stepOf(who, options.maxStepMs, this.#everyMs),
      leaseTtlMs: wholeNumber(who, 'leaseTtlMs', options.leaseTtlMs, MINUTE, { unit: 'ms' }),
      concurrency: wholeNumber(who, 'concurrency', options.concurrency, 4),
    }
    this.#now = options.now ?? Date.now
    this.#retries = isRetryStore(options.store) ? options.store : new MemoryRetries()
  }

  /** Its shards: checkpoints `refresh:<shard>` of the store. */
  get shards(): number {
    return this.#settings.shards
  }

  /**
   * One step: the connections whose turn came since, each refreshed unless it need not be.
   * `retry: false` leaves the refreshes that failed at earlier steps for a later step.
   */
  async step(options: StepOptions = {}): Promise<RefreshAheadReport> {
    const started = performance.now()
    const now = this.#now()
    const report: RefreshAheadReport = {
      shards: 0,
      busyShards: 0,
      due: 0,
      refreshed: 0,
      fresh: 0,
      reauthorizationRequired: [],
      notConnected: [],
      failed: [],
      behindMs: 0,
      ms: 0,
    }
    const { maxStepMs } = this.#settings
    if (options.retry !== false) {
      const taken = await this.#retries.takeRetries(
        RETRIES,
        now,
        RETRIES_PER_STEP,
        this.#settings.leaseTtlMs,
      )
      await eachOf(taken, this.#settings.concurrency, (t) =>
        this.#one(t.key, now, maxStepMs, report, t.failures),
      )
    }
    const outcome = await stepShards(
      {
        ...this.#settings,
        store: this.options.store,
        name: 'refresh',
        periodMs: this.#everyMs,
        maxStepMs,
      },
      now,
      this.options.keys,
      (due) =>
        eachOf(due, this.#settings.concurrency, (key) => this.#one(key, now, maxStepMs, report)),
    )
    Object.assign(report, stepCounts(outcome))
    report.ms = Math.round(performance.now() - started)
    return report
  }

  /**
   * One connection, refreshed at its turn or at a held try (`failed`: the failures before it):
   * its token then lives a full period past it, so the request path never finds it due. One
   * obtained since two steps before its turn (refreshed elsewhere: by a step that died before
   * its checkpoint, or just connected) is left, however late the step that finds it due. Each
   * try is one token request: the backoff is the held try's, not the manager's.
   */
  async #one(
    key: string,
    now: number,
    maxStepMs: number,
    report: RefreshAheadReport,
    failed?: number,
  ) {
    try {
      const record = await this.tokens.getRecord(key, { revalidate: true, retry: false })
      // `obtainedAt` may be the service's `Date` header (a whole second, up to one early).
      const turn = lastTurn(slotOf(key, this.#everyMs), this.#everyMs, now)
      if (record.obtainedAt !== undefined && record.obtainedAt > turn - 2 * maxStepMs - 1_000) {
        report.fresh++
        await this.#worked(key, failed)
        return
      }
      await this.options.rateCap?.acquire()
      // The manager's refresh of a token to be replaced: one across processes, and none when
      // the stored token is another already (someone refreshed since).
      const after = await this.tokens.getRecord(key, {
        rejectedToken: record.accessToken,
        retry: false,
      })
      // Counted only when the token was replaced (here or by another process meanwhile).
      if (after.accessToken === record.accessToken)
        throw new Error(`the token of "${key}" was not replaced`)
      report.refreshed++
      await this.#worked(key, failed)
    } catch (error) {
      const code = isSchedulingError(error) ? error.code : undefined
      if (code === 'reauthorization_required' || code === 'not_connected') {
        ;(code === 'not_connected' ? report.notConnected : report.reauthorizationRequired).push(key)
        if (failed !== undefined) await this.#retries.dropRetry(RETRIES, key)
        return
      }
      report.failed.push(key)
      await this.#failedAgain(key, now, error, failed, code)
    }
  }

  /**
   * Holds the connection's next try in the store, backing off from its failures in a row;
   * the first failure is told (`refresh_failing`), by whichever instance saw it.
   */
  async #failedAgain(
    key: string,
    now: number,
    error: unknown,
    failed: number | undefined,
    code: string | undefined,
  ) {
    const before = failed ?? (await this.#retries.heldRetry(RETRIES, key))?.failures ?? 0
    const failures = before + 1
    const at = nextTryAt(now, failures, this.#everyMs, askedWaitMs(error))
    await this.#retries.holdRetry(RETRIES, key, at, failures)
    if (before === 0)
      notify(this.options.onConnectionChange, {
        type: 'refresh_failing',
        key,
        error: code ?? 'refresh_failed',
      })
  }

  /** A held try worked (or was no longer needed): dropped, and told `refresh_recovered`. */
  async #worked(key: string, failed: number | undefined) {
    if (failed === undefined) return
    await this.#retries.dropRetry(RETRIES, key)
    notify(this.options.onConnectionChange, { type: 'refresh_recovered', key })
  }
}
