import { ReauthorizationRequiredError } from '../errors/connection.js'
import { isTransientError } from '../errors/errors.js'
import { ClosedError, StaleWriteError } from '../errors/store.js'
import { TimeoutError } from '../errors/transport.js'
import { sleep } from '../http/fetch.js'
import { type Instruments, meters, since } from '../telemetry/metrics.js'
import {
  attributeText,
  endSpan,
  errorType,
  startSpan,
  type Traced,
  within,
} from '../telemetry/otel.js'
import { type ConnectionStatus, listenForConnectionChanges, statusOf } from './connection.js'
import { actionFor, INITIAL_TOKEN_STATE, type TokenState } from './machine.js'
import { resolveManagerSettings, type TokenManagerOptions } from './options.js'
import type { TokenRecord, TokenSet } from './record.js'
import {
  backoff,
  emit,
  fingerprint,
  isInvalidGrant,
  isTimeout,
  TokenStoreAccess,
} from './store-access.js'

export interface GetTokenOptions {
  /** An access token the API just refused (401): refresh, unless the stored one is already another. */
  rejectedToken?: string
  /**
   * Read the store even when a token is kept in this process (what it reads is kept from then
   * on): for work that must act on the key's current connection, such as its webhooks.
   */
  revalidate?: boolean
}

export interface TokenManager {
  /**
   * A valid access token for the connection `key`, refreshed first when due. The token read
   * or refreshed is kept in this process until its refresh time: calls until then read no
   * store. Pass `rejectedToken` after a 401: the store is read again (another process may have
   * refreshed), and the token is refreshed once if the stored one is the refused one.
   */
  getAccessToken(key: string, options?: GetTokenOptions): Promise<string>
  /** The whole record (frozen: callers share it), refreshed first when due; kept like the token. */
  getRecord(key: string, options?: GetTokenOptions): Promise<TokenRecord>
  /** The state machine's state for a key in this process. */
  state(key: string): TokenState
  /**
   * Where the key's connection stands, read from the store (never from this process's memory):
   * `connected`, `needs_reauth` or `disconnected`, with the service account id.
   */
  status(key: string): Promise<ConnectionStatus>
  /**
   * Drops what this process keeps of the key (its token, its refresh state): the next call
   * reads the store. The OAuth routes do this for every manager of their token store at once;
   * call it after writing the store yourself.
   */
  forget(key: string): void
  /** How many keys this process remembers refresh state for (at most `2 * maxTrackedKeys`). */
  readonly trackedKeys: number
  /**
   * Graceful shutdown: refuses new calls (`ClosedError`), lets every refresh under way finish
   * and its tokens be written (a failing store write is retried until it lands), then gives the
   * leases back. Resolves when all is done, or after `timeoutMs` (default 30 000), when a write
   * that still fails is given up: call it on SIGTERM, after the HTTP server stopped taking
   * requests, and exit when it resolves.
   */
  close(options?: { timeoutMs?: number }): Promise<void>
}

/** What observes one refresh: its span when recording, the metrics, and what it came to. */
interface RefreshWatch {
  traced: Traced | undefined
  m: Instruments | undefined
  outcome: 'refreshed' | 'refreshed_elsewhere'
}

/** The token manager's work for all keys of this process: one refresh per key at a time. */
class Refresher extends TokenStoreAccess {
  // Settled flights are deleted: this map holds only refreshes under way.
  readonly #flights = new Map<string, Promise<TokenRecord>>()

  async #callRefresh(key: string, refreshToken: string): Promise<TokenSet> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.s.oauth.refresh(refreshToken, { timeoutMs: this.s.requestTimeout })
      } catch (error) {
        // A time-out may have reached the server, which spent the refresh token: sending it
        // again could revoke the grant. Only answered failures and refused connections are retried.
        if (!isTransientError(error) || isTimeout(error) || attempt >= this.s.attempts) throw error
        emit(this.s.options.onRefreshFailed, key, error)
        const delay = Math.min(this.s.maxDelay, this.s.baseDelay * 2 ** (attempt - 1))
        await sleep(delay / 2 + Math.random() * (delay / 2))
      }
    }
  }

  /** A record whose refresh token is no longer `used`: another process refreshed (or the user reconnected). */
  async #successor(key: string, latest: TokenRecord, cause: unknown): Promise<TokenRecord> {
    if (latest.reauthorizationRequired) return this.fail(key, cause)
    this.advanceTo(key, latest)
    return latest
  }

  /**
   * After `invalid_grant`: another process may have spent the same refresh token a moment
   * before us and not yet written what it got. Watch the store, with backoff, for at least as
   * long as a refresh takes; only if no new refresh token appears is the connection dead.
   */
  async #recoverOrFail(
    key: string,
    used: TokenRecord,
    cause: unknown,
    refreshMs: number,
  ): Promise<TokenRecord> {
    const deadline = performance.now() + Math.max(this.s.invalidGrantWait, 2 * refreshMs)
    for (let pause = this.s.leasePoll; ; pause = backoff(pause)) {
      const latest = await this.read(key)
      if (latest.refreshToken !== used.refreshToken) return this.#successor(key, latest, cause)
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
      if (latest.refreshToken !== used.refreshToken) return this.#successor(key, latest, cause)
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
  async #storeRefreshed(key: string, base: TokenRecord, tokens: TokenSet): Promise<TokenRecord> {
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
  #refreshed(key: string, stored: TokenRecord): TokenRecord {
    const entry = this.keys.get(key)
    entry.seen = fingerprint(stored)
    entry.lastError = undefined
    this.apply(key, { type: 'refresh_succeeded', ...this.times(stored, this.s.clock()) })
    emit(this.s.options.onRefreshed, key, stored)
    return this.keepFresh(key, stored)
  }

  /** Refreshes with the tokens of `current` (read under the lease). */
  async #refreshWith(
    key: string,
    current: TokenRecord,
    rejectedToken: string | undefined,
    watch: RefreshWatch | undefined,
  ): Promise<TokenRecord> {
    let tokens: TokenSet
    const started = performance.now()
    try {
      tokens = await this.#callRefresh(key, current.refreshToken)
    } catch (error) {
      if (isInvalidGrant(error))
        return this.#recoverOrFail(key, current, error, performance.now() - started)
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
      stored = await within(write, () => this.#storeRefreshed(key, current, tokens))
    } catch (error) {
      endSpan(write, error)
      throw error
    }
    endSpan(write)
    if (stored.refreshToken !== tokens.refreshToken) return stored
    if (watch !== undefined) watch.outcome = 'refreshed'
    return this.#refreshed(key, stored)
  }

  /** One refresh of `key`, in its span (`scheduling.token.refresh`) and counted when observed. */
  async #refresh(key: string, base: TokenRecord, rejectedToken?: string): Promise<TokenRecord> {
    const traced = startSpan('scheduling.token.refresh', {
      attributes: { 'scheduling.account': attributeText(key) },
    })
    const m = meters()
    if (traced === undefined && m === undefined)
      return this.#refreshUnder(key, base, rejectedToken, undefined)
    // Until this process stores tokens it obtained, the refresh was someone else's.
    const watch: RefreshWatch = { traced, m, outcome: 'refreshed_elsewhere' }
    try {
      const record = await within(traced, () => this.#refreshUnder(key, base, rejectedToken, watch))
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
      return await this.#refreshWith(key, current, rejectedToken, watch)
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
      flight = this.#refresh(key, record, rejected ? opts?.rejectedToken : undefined).finally(() =>
        this.#flights.delete(key),
      )
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
    status: async (key) => statusOf(key, await options.store.get(key)),
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
