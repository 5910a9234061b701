import { ReauthorizationRequiredError } from '../errors/connection.js'
import { ClosedError } from '../errors/store.js'
import { isInvalidGrant, TimeoutError } from '../errors/transport.js'
import { type Instruments, meters, since } from '../telemetry/metrics.js'
import {
  attributeText,
  endSpan,
  errorType,
  startSpan,
  type Traced,
  within,
} from '../telemetry/otel.js'
import { listenForConnectionChanges, statusOf } from './connection.js'
import type { GetTokenOptions, TokenManager } from './contract.js'
import { actionFor, INITIAL_TOKEN_STATE } from './machine.js'
import { resolveManagerSettings, type TokenManagerOptions } from './options.js'
import { RefreshOutcomes } from './outcomes.js'
import { fingerprint, type TokenRecord, type TokenSet } from './record.js'
import { emit } from './store-access.js'

/** What observes one refresh: its span when recording, the metrics, and what it came to. */
interface RefreshWatch {
  traced: Traced | undefined
  m: Instruments | undefined
  outcome: 'refreshed' | 'refreshed_elsewhere'
}

/** The token manager's work for all keys of this process: one refresh per key at a time. */
class Refresher extends RefreshOutcomes {
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
