import { isTransientError } from '../errors/errors.js'
import { StaleWriteError } from '../errors/store.js'
import { isTimeout } from '../errors/transport.js'
import { sleep } from '../sleep.js'
import { actionFor } from './machine.js'
import { fingerprint, type TokenRecord, type TokenSet } from './record.js'
import { backoff, emit, TokenStoreAccess } from './store-access.js'

// What a refresh comes to, for the refresher (manager.ts): the token endpoint called with the
// retries a refresh may have, the tokens it got stored (the crash window), and after
// \`invalid_grant\`, either the tokens another process got or the connection flagged dead.

/** The outcomes of one key's refresh, on the store access every refresh shares. */
export abstract class RefreshOutcomes extends TokenStoreAccess {
  protected async callRefresh(
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
  protected async successor(
    key: string,
    latest: TokenRecord,
    cause: unknown,
  ): Promise<TokenRecord> {
    if (latest.reauthorizationRequired) return this.fail(key, cause)
    this.advanceTo(key, latest)
    return latest
  }

  /**
   * After `invalid_grant`: another process may have spent the same refresh token a moment
   * before us and not yet written what it got. Watch the store, with backoff, for at least as
   * long as a refresh takes; only if no new refresh token appears is the connection dead.
   */
  protected async recoverOrFail(
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
  protected async storeRefreshed(
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
  protected refreshed(key: string, stored: TokenRecord): TokenRecord {
    const entry = this.keys.get(key)
    entry.seen = fingerprint(stored)
    entry.lastError = undefined
    this.apply(key, { type: 'refresh_succeeded', ...this.times(stored, this.s.clock()) })
    emit(this.s.options.onRefreshed, key, stored)
    return this.keepFresh(key, stored)
  }
}
