import { newOwnerId } from '../claims/owner.js'
import { NotConnectedError, ReauthorizationRequiredError } from '../errors/connection.js'
import { isTransientError } from '../errors/errors.js'
import { ClosedError, StaleWriteError } from '../errors/store.js'
import { isInvalidGrant, isTimeout, TimeoutError } from '../errors/transport.js'
import { notify } from '../log.js'
import { sleep } from '../sleep.js'
import { type Instruments, meters, since } from '../telemetry/metrics.js'
import {
  attributeText,
  endSpan,
  errorType,
  startSpan,
  type Traced,
  within,
} from '../telemetry/otel.js'
import {
  connectionStamp,
  listenForConnectionChanges,
  madeForOtherApp,
  otherAppWhy,
  rolledBackWhy,
  statusOf,
} from './connection.js'
import type { GetTokenOptions, TokenManager } from './contract.js'
import { FreshRecords } from './fresh.js'
import { KeyStates } from './key-states.js'
import {
  actionFor,
  INITIAL_TOKEN_STATE,
  type TokenEvent,
  type TokenState,
  type TokenTimes,
  transition,
} from './machine.js'
import {
  type ManagerSettings,
  resolveManagerSettings,
  type TokenManagerOptions,
} from './options.js'
import {
  DEFAULT_LIFETIME_MS,
  fingerprint,
  frozen,
  type TokenRecord,
  type TokenSet,
} from './record.js'

// The token manager: one class, \`Refresher\`, for all keys of this process. Read top down: what
// it knows of each key (its state, moved by the pure \`transition\` of machine.ts, and the
// record kept in process), its store calls (reads, compare-and-set writes, the refresh lease
// taken, renewed and given back, writes retried until they land), what a refresh comes to (the
// token endpoint with its retries, the tokens stored in the crash window, \`invalid_grant\`
// recovered or the connection flagged dead), and the refresh itself, one per key at a time.

/** What waiting for the refresh lease came to. */
type Lease =
  /** The store has no leases: refresh without one. */
  | { kind: 'none' }
  /** This process holds the lease until it releases it. */
  | { kind: 'held'; owner: string }
  /** Another process refreshed while this one waited: use its record. */
  | { kind: 'refreshed'; record: TokenRecord }

/** Tells an app's listener; one that throws does not break token handling. */
const emit = notify

/** Grows a polling pause: doubling, up to half a second. */
const backoff = (pause: number) => Math.min(pause * 2, 500)

/** What observes one refresh: its span when recording, the metrics, and what it came to. */
interface RefreshWatch {
  traced: Traced | undefined
  m: Instruments | undefined
  outcome: 'refreshed' | 'refreshed_elsewhere'
}

/** The token manager's work for all keys of this process: one refresh per key at a time. */
class Refresher {
  readonly keys: KeyStates
  /** Lease releases retried after a failure: `close()` waits for them. */
  private readonly background = new Set<Promise<void>>()
  /** Set by `close()`: when store writes that keep failing are given up. */
  private closeDeadline: number | undefined

  /** The records handed out without a store read, each until its time. */
  readonly kept: FreshRecords

  constructor(readonly s: ManagerSettings) {
    this.keys = new KeyStates(s.maxKeys)
    this.kept = new FreshRecords(s.clock, s.options.now !== undefined, 2 * s.maxKeys)
  }

  private times(record: TokenRecord, now: number): TokenTimes {
    const lifetime =
      record.expiresAt - (record.obtainedAt ?? record.expiresAt - DEFAULT_LIFETIME_MS)
    return {
      now,
      refreshAt: record.expiresAt - Math.max(0, lifetime) * this.s.ratio,
      expiresAt: record.expiresAt,
    }
  }

  private apply(key: string, event: TokenEvent): TokenState {
    const entry = this.keys.get(key)
    entry.state = transition(entry.state, event)
    return entry.state
  }

  /** Moves the key's state on to match a record just read (replaced, then the clock's tick). */
  private advanceTo(key: string, record: TokenRecord): TokenState {
    const now = this.s.clock()
    const print = fingerprint(record)
    const entry = this.keys.get(key)
    if (entry.seen !== print) {
      entry.seen = print
      this.apply(key, {
        type: 'record_replaced',
        reauthorizationRequired: record.reauthorizationRequired === true,
        ...this.times(record, now),
      })
    }
    return this.apply(key, { type: 'tick', ...this.times(record, now) })
  }

  /**
   * The token this process may use for `key` without a store read: the record last read or
   * refreshed, until its refresh time (or the revalidation bound). `undefined` once that
   * passed, after a rejection of it, and after anything but a plain use (a refresh on hold, a
   * failure, a deleted record).
   */
  fresh(key: string): TokenRecord | undefined {
    return this.kept.get(key)
  }

  /** Keeps `record` (usable now: action `use`) in process until its refresh time; frozen. */
  private keepFresh(key: string, record: TokenRecord): TokenRecord {
    const kept = Object.isFrozen(record) ? record : frozen(record)
    if (this.closeDeadline !== undefined) return kept
    const now = this.s.clock()
    this.kept.set(key, kept, Math.min(this.times(kept, now).refreshAt, now + this.s.revalidate))
    return kept
  }

  /** Drops the in-process token of `key` (it was refused, or the record changed state). */
  private forgetFresh(key: string): void {
    this.kept.delete(key)
  }

  /** The connection must be authorized again: moves the state there, tells the app, rejects. */
  private async fail(key: string, cause?: unknown): Promise<never> {
    this.forgetFresh(key)
    this.apply(key, { type: 'refresh_failed', reason: 'invalid_grant' })
    const error = new ReauthorizationRequiredError(key, { cause })
    emit(this.s.options.onReauthorizationRequired, key, error)
    notify(this.s.options.onConnectionChange, { type: 'needs_reauth', key })
    throw error
  }

  /**
   * Why a stored record is no connection this manager would use (another app's, or older than
   * the one this process already used), without changing what it knows: what `status` tells.
   */
  refusedWhy(key: string, record: TokenRecord): string | undefined {
    const { app } = this.s.options
    if (app !== undefined && madeForOtherApp(record, app)) return otherAppWhy(record, app)
    return rolledBackWhy(record, this.keys.peek(key)?.connected)
  }

  private async read(key: string): Promise<TokenRecord> {
    const record = await this.s.store.get(key)
    if (record === undefined) {
      this.keys.delete(key)
      this.kept.delete(key)
      throw new NotConnectedError(key)
    }
    const { app } = this.s.options
    if (app !== undefined && madeForOtherApp(record, app)) {
      this.keys.delete(key)
      this.kept.delete(key)
      throw new NotConnectedError(key, otherAppWhy(record, app))
    }
    // Connections only move forward: a record of an older one than this process already read
    // (a restored backup, a replica behind, maybe another account's) is never used. Refreshes
    // keep the generation; a disconnect or reconnection announced here forgets it.
    const entry = this.keys.get(key)
    const rolledBack = rolledBackWhy(record, entry.connected)
    if (rolledBack !== undefined) {
      this.kept.delete(key)
      throw new NotConnectedError(key, rolledBack)
    }
    entry.connected = connectionStamp(record.connection) ?? entry.connected
    return record
  }

  /** Writes `next` over `base`: compare-and-set when the store can. Resolves to what is stored. */
  private async write(
    key: string,
    base: TokenRecord,
    next: TokenRecord,
  ): Promise<TokenRecord | undefined> {
    const { version: _, ...record } = next
    if (!this.s.hasCas) {
      await this.s.store.set(key, record)
      return record
    }
    if (await this.s.store.compareAndSet!(key, record, base.version)) {
      return { ...record, version: (base.version ?? 0) + 1 }
    }
    return undefined
  }

  /** Waits for the lease; or for the record another process writes while holding it. */
  private async takeLease(key: string, base: TokenRecord): Promise<Lease> {
    if (!this.s.hasLease) return { kind: 'none' }
    const owner = newOwnerId()
    const deadline = performance.now() + this.s.leaseWait
    for (let pause = this.s.leasePoll; ; pause = backoff(pause)) {
      if (await this.s.store.acquireLease!(key, owner, this.s.leaseTtl))
        return { kind: 'held', owner }
      await sleep(pause)
      const latest = await this.read(key)
      if (fingerprint(latest) !== fingerprint(base)) {
        const action = actionFor(this.advanceTo(key, latest))
        if (action === 'use') return { kind: 'refreshed', record: latest }
        if (action === 'reauthorize') return this.fail(key)
      }
      if (performance.now() > deadline) {
        throw new TimeoutError(`Waiting for another process to refresh "${key}"`, this.s.leaseWait)
      }
      if (this.pastCloseDeadline()) throw new ClosedError('The token manager')
    }
  }

  private pastCloseDeadline(): boolean {
    return this.closeDeadline !== undefined && performance.now() >= this.closeDeadline
  }

  /**
   * Runs a store call until it succeeds: with backoff, while the lease is renewed beside it.
   * For what must not be lost (new tokens that exist nowhere else); given up only once
   * `close()`'s time is out.
   */
  private async persist<T>(key: string, call: () => Promise<T>): Promise<T> {
    for (let pause = this.s.leasePoll; ; pause = Math.min(pause * 2, 1_000)) {
      try {
        return await call()
      } catch (error) {
        if (this.pastCloseDeadline()) throw error
        emit(this.s.options.onRefreshFailed, key, error)
        await sleep(pause)
      }
    }
  }

  /** Renews a held lease every third of its time, until the returned stop is called. */
  private keepLease(key: string, owner: string): () => void {
    const timer = setInterval(() => {
      this.s.store.acquireLease!(key, owner, this.s.leaseTtl).catch(() => {})
    }, this.s.leaseRenew)
    ;(timer as { unref?: () => void }).unref?.()
    return () => clearInterval(timer)
  }

  /**
   * Gives a lease back. A failed release is retried in the background (for at most the lease's
   * time, after which it has lapsed anyway), so the key is not blocked for the whole TTL by
   * one failed call, and the callers do not wait for a store that is down.
   */
  private async release(key: string, owner: string): Promise<void> {
    const release = () => this.s.store.releaseLease!(key, owner)
    try {
      await release()
      return
    } catch {}
    const until = performance.now() + this.s.leaseTtl
    const retry = (async () => {
      for (let pause = this.s.leasePoll; performance.now() + pause < until; pause *= 2) {
        await sleep(pause)
        try {
          await release()
          return
        } catch {}
      }
    })()
    this.background.add(retry)
    retry.finally(() => this.background.delete(retry))
  }
  // What a refresh comes to.

  private async callRefresh(
    key: string,
    refreshToken: string,
    attempts = this.s.attempts,
  ): Promise<TokenSet> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.s.oauth.refresh(refreshToken, { timeoutMs: this.s.requestTimeout })
      } catch (error) {
        // A time-out may have reached the server, which spent the refresh token: sending it
        // again could revoke the grant. Only answered failures and refused connections are retried.
        if (!isTransientError(error) || isTimeout(error) || attempt >= attempts) throw error
        emit(this.s.options.onRefreshFailed, key, error)
        const delay = Math.min(this.s.maxDelay, this.s.baseDelay * 2 ** (attempt - 1))
        await sleep(delay / 2 + Math.random() * (delay / 2))
      }
    }
  }

  /** A record whose refresh token is no longer `used`: another process refreshed (or the user reconnected). */
  private async successor(key: string, latest: TokenRecord, cause: unknown): Promise<TokenRecord> {
    if (latest.reauthorizationRequired) return this.fail(key, cause)
    this.advanceTo(key, latest)
    return latest
  }

  /**
   * After `invalid_grant`: another process may have spent the same refresh token a moment
   * before us and not yet written what it got. Watch the store, with backoff, for at least as
   * long as a refresh takes; only if no new refresh token appears is the connection dead.
   */
  private async recoverOrFail(
    key: string,
    used: TokenRecord,
    cause: unknown,
    refreshMs: number,
  ): Promise<TokenRecord> {
    const deadline = performance.now() + Math.max(this.s.invalidGrantWait, 2 * refreshMs)
    for (let pause = this.s.leasePoll; ; pause = backoff(pause)) {
      const latest = await this.read(key)
      if (latest.refreshToken !== used.refreshToken) return this.successor(key, latest, cause)
      // Another process watched as long and came to the same conclusion.
      if (latest.reauthorizationRequired) return this.fail(key, cause)
      if (performance.now() >= deadline) break
      await sleep(pause)
    }
    // Without compare-and-set the flag is never written: it could land on a record whose
    // refresh token changed between the read and the write. Each process then finds out once.
    if (!this.s.hasCas) return this.fail(key, cause)
    for (let tries = 0; tries < 5; tries++) {
      const latest = await this.read(key)
      if (latest.refreshToken !== used.refreshToken) return this.successor(key, latest, cause)
      if (latest.reauthorizationRequired) return this.fail(key, cause)
      if (await this.write(key, latest, { ...latest, reauthorizationRequired: true }))
        return this.fail(key, cause)
    }
    return this.fail(key, cause)
  }

  /**
   * Stores the tokens a refresh just obtained. With a rotating server they are the only valid
   * ones: a write refused because the record was flagged meanwhile, or because something else
   * changed while it still holds the refresh token we spent, is retried on the new version.
   * A write that throws (a store blip, a restart) is retried until it lands. Only tokens from
   * elsewhere (a reconnect) win over ours. Nothing else is awaited between the token
   * endpoint's answer and this write: that is the crash window.
   */
  private async storeRefreshed(
    key: string,
    base: TokenRecord,
    tokens: TokenSet,
  ): Promise<TokenRecord> {
    let latest = base
    for (let tries = 0; tries < 10; tries++) {
      const next: TokenRecord = { ...latest, ...tokens }
      delete next.reauthorizationRequired
      const stored = await this.persist(key, () => this.write(key, latest, next))
      if (stored !== undefined) return stored
      latest = await this.persist(key, () => this.read(key))
      const ours = latest.reauthorizationRequired || latest.refreshToken === base.refreshToken
      if (!ours) {
        // Newer tokens from elsewhere: they win.
        if (actionFor(this.advanceTo(key, latest)) === 'use') return latest
        throw new StaleWriteError(key)
      }
    }
    throw new StaleWriteError(key)
  }

  /** Records a successful refresh in the key's state and tells the app. */
  private refreshed(key: string, stored: TokenRecord): TokenRecord {
    const entry = this.keys.get(key)
    entry.seen = fingerprint(stored)
    entry.lastError = undefined
    this.apply(key, { type: 'refresh_succeeded', ...this.times(stored, this.s.clock()) })
    emit(this.s.options.onRefreshed, key, stored)
    return this.keepFresh(key, stored)
  }
  // The refresh, one per key at a time.

  // Settled flights are deleted: this map holds only refreshes under way.
  readonly #flights = new Map<string, Promise<TokenRecord>>()

  /** Refreshes with the tokens of `current` (read under the lease). */
  async #refreshWith(
    key: string,
    current: TokenRecord,
    rejectedToken: string | undefined,
    watch: RefreshWatch | undefined,
    attempts: number,
  ): Promise<TokenRecord> {
    let tokens: TokenSet
    const started = performance.now()
    try {
      tokens = await this.callRefresh(key, current.refreshToken, attempts)
    } catch (error) {
      if (isInvalidGrant(error))
        return this.recoverOrFail(key, current, error, performance.now() - started)
      // Transient or unexpected: the stored tokens stay exactly as they are.
      const retryAt = this.s.clock() + this.s.maxDelay
      this.apply(key, { type: 'refresh_failed', reason: 'transient', retryAt })
      this.keys.get(key).lastError = error
      emit(this.s.options.onRefreshFailed, key, error)
      if (this.s.clock() < current.expiresAt && current.accessToken !== rejectedToken)
        return current
      throw error
    }
    const write = startSpan('scheduling.token_store.write', { parent: watch?.traced })
    let stored: TokenRecord
    try {
      stored = await within(write, () => this.storeRefreshed(key, current, tokens))
    } catch (error) {
      endSpan(write, error)
      throw error
    }
    endSpan(write)
    if (stored.refreshToken !== tokens.refreshToken) return stored
    if (watch !== undefined) watch.outcome = 'refreshed'
    return this.refreshed(key, stored)
  }

  /** One refresh of `key`, in its span (`scheduling.token.refresh`) and counted when observed. */
  async #refresh(
    key: string,
    base: TokenRecord,
    rejectedToken: string | undefined,
    attempts: number,
  ): Promise<TokenRecord> {
    const traced = startSpan('scheduling.token.refresh', {
      attributes: { 'scheduling.account': attributeText(key) },
    })
    const m = meters()
    if (traced === undefined && m === undefined)
      return this.#refreshUnder(key, base, rejectedToken, undefined, attempts)
    // Until this process stores tokens it obtained, the refresh was someone else's.
    const watch: RefreshWatch = { traced, m, outcome: 'refreshed_elsewhere' }
    try {
      const record = await within(traced, () =>
        this.#refreshUnder(key, base, rejectedToken, watch, attempts),
      )
      endSpan(traced, undefined, { 'scheduling.refresh.outcome': watch.outcome })
      m?.refreshes.add(1, { 'scheduling.refresh.outcome': watch.outcome })
      return record
    } catch (error) {
      // A dead grant ends as reauthorization_required, with the server's invalid_grant as cause.
      const grant = isInvalidGrant(error) || isInvalidGrant((error as { cause?: unknown })?.cause)
      const cause = grant ? 'invalid_grant' : errorType(error)
      endSpan(traced, error, { 'scheduling.refresh.outcome': 'failed' })
      m?.refreshes.add(1, { 'scheduling.refresh.outcome': 'failed', 'error.type': cause })
      throw error
    }
  }

  /** The lease, in its span (`scheduling.token.lease`), its wait recorded. */
  async #lease(key: string, base: TokenRecord, watch: RefreshWatch | undefined) {
    if (watch === undefined) return this.takeLease(key, base)
    const traced = startSpan('scheduling.token.lease', { parent: watch.traced })
    const started = performance.now()
    try {
      const lease = await within(traced, () => this.takeLease(key, base))
      endSpan(traced, undefined, { 'scheduling.lease.outcome': lease.kind })
      watch.m?.leaseWait.record(since(started), { 'scheduling.lease.outcome': lease.kind })
      return lease
    } catch (error) {
      endSpan(traced, error)
      watch.m?.leaseWait.record(since(started), {
        'scheduling.lease.outcome': 'failed',
        'error.type': errorType(error),
      })
      throw error
    }
  }

  async #refreshUnder(
    key: string,
    base: TokenRecord,
    rejectedToken: string | undefined,
    watch: RefreshWatch | undefined,
    attempts: number,
  ): Promise<TokenRecord> {
    this.apply(key, { type: 'refresh_started' })
    const lease = await this.#lease(key, base, watch)
    if (lease.kind === 'refreshed') return lease.record
    const stopRenewing = lease.kind === 'held' ? this.keepLease(key, lease.owner) : undefined
    try {
      const current = await this.read(key)
      if (current.reauthorizationRequired) return await this.fail(key)
      if (fingerprint(current) !== fingerprint(base) && current.accessToken !== rejectedToken) {
        // Someone refreshed (or reconnected) since we looked.
        if (actionFor(this.advanceTo(key, current)) === 'use') return current
        this.apply(key, { type: 'refresh_started' })
      }
      return await this.#refreshWith(key, current, rejectedToken, watch, attempts)
    } finally {
      stopRenewing?.()
      if (lease.kind === 'held') await this.release(key, lease.owner)
    }
  }

  /** Forgets a key whose connection changed; a refresh under way finds the change in the store. */
  forget(key: string): void {
    this.keys.delete(key)
    this.kept.delete(key)
  }

  async close(timeoutMs = 30_000): Promise<void> {
    this.closeDeadline ??= performance.now() + timeoutMs
    this.kept.close()
    while (this.#flights.size > 0 || this.background.size > 0) {
      await Promise.allSettled([...this.#flights.values(), ...this.background])
    }
  }

  /** The in-process token when it may be used for this call: fresh, open, not just refused. */
  usable(key: string, opts: GetTokenOptions | undefined): TokenRecord | undefined {
    if (opts !== undefined && (opts.rejectedToken !== undefined || opts.revalidate === true))
      return undefined
    if (this.closeDeadline !== undefined) return undefined
    return this.fresh(key)
  }

  async getRecord(key: string, opts?: GetTokenOptions): Promise<TokenRecord> {
    if (this.closeDeadline !== undefined) throw new ClosedError('The token manager')
    const kept = this.usable(key, opts)
    if (kept !== undefined) return kept
    // A refused token is never used again from memory: the store says what is current.
    if (opts?.rejectedToken !== undefined) this.forgetFresh(key)
    const record = await this.read(key)
    const action = actionFor(this.advanceTo(key, record))
    if (action === 'reauthorize') {
      this.forgetFresh(key)
      throw new ReauthorizationRequiredError(key)
    }
    const rejected = opts?.rejectedToken !== undefined && opts.rejectedToken === record.accessToken
    if (action === 'use' && !rejected) return this.keepFresh(key, record)
    this.forgetFresh(key)
    if (action === 'hold' && !rejected) {
      if (this.s.clock() < record.expiresAt) return record
      throw (
        this.keys.peek(key)?.lastError ?? new TimeoutError(`Refreshing "${key}"`, this.s.maxDelay)
      )
    }
    let flight = this.#flights.get(key)
    if (flight === undefined) {
      const attempts = opts?.retry === false ? 1 : this.s.attempts
      flight = this.#refresh(
        key,
        record,
        rejected ? opts?.rejectedToken : undefined,
        attempts,
      ).finally(() => this.#flights.delete(key))
      this.#flights.set(key, flight)
    }
    return flight
  }
}

const accessTokenOf = (record: TokenRecord) => record.accessToken

/**
 * Keeps access tokens fresh. One refresh per key at a time in this process; across processes
 * too when the store offers leases; never a write over newer tokens when it offers
 * compare-and-set; a refused refresh token is only declared dead after re-reading the store.
 *
 * @example
 * ```ts
 * const tokens = createTokenManager({ oauth: createOAuthClient(oauthOptions), store: tokenStore })
 * const api = createSchedulingClient({
 *   baseUrl: 'https://api.example.com',
 *   token: { manager: tokens, key: accountId },
 * })
 * const me = await api.me()
 * ```
 */
export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const refresher = new Refresher(resolveManagerSettings(options))
  const stopListening = listenForConnectionChanges(options.store, (key) => refresher.forget(key))
  const { kept } = refresher
  const { entries } = kept
  return {
    getRecord: (key, opts) => refresher.getRecord(key, opts),
    // A fresh token kept in process is answered without a store read, a clock read, or an
    // async function's own promise and turn (the kept records are dropped once closed).
    getAccessToken: (key, opts) => {
      if (opts === undefined) {
        const entry = entries.get(key)
        if (entry !== undefined && entry.token !== undefined) {
          // The clock on every 64th read only (see FreshRecords).
          if ((++entry.reads & 63) !== 0) return entry.token
          const token = kept.answer(entry)
          if (token !== undefined) return token
        }
      }
      return refresher.getRecord(key, opts).then(accessTokenOf)
    },
    state: (key) => refresher.keys.peek(key)?.state ?? INITIAL_TOKEN_STATE,
    status: async (key) => {
      const record = await options.store.get(key)
      const refused = record === undefined ? undefined : refresher.refusedWhy(key, record)
      // A record the manager refuses (another app's, rolled back) is no connection to tell.
      return refused === undefined ? statusOf(key, record) : { key, state: 'disconnected', refused }
    },
    forget: (key) => refresher.forget(key),
    get trackedKeys() {
      return refresher.keys.size
    },
    close: (opts) => {
      stopListening()
      return refresher.close(opts?.timeoutMs)
    },
  }
}
