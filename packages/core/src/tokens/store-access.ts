import { newOwnerId } from '../claims/owner.js'
import { NotConnectedError, ReauthorizationRequiredError } from '../errors/connection.js'
import { ClosedError } from '../errors/store.js'
import { TimeoutError } from '../errors/transport.js'
import { notify } from '../log.js'
import { sleep } from '../sleep.js'
import { connectionStamp, madeForOtherApp, otherAppWhy, rolledBackWhy } from './connection.js'
import { FreshRecords } from './fresh.js'
import { KeyStates } from './key-states.js'
import {
  actionFor,
  type TokenEvent,
  type TokenState,
  type TokenTimes,
  transition,
} from './machine.js'
import type { ManagerSettings } from './options.js'
import { DEFAULT_LIFETIME_MS, fingerprint, frozen, type TokenRecord } from './record.js'

// The token manager's reads and writes of its store, and the state of each key they move:
// compare-and-set writes, the refresh lease (taken, renewed, given back), writes retried until
// they land. `Refresher` (manager.ts) builds the refresh itself on these.

/** What waiting for the refresh lease came to. */
export type Lease =
  /** The store has no leases: refresh without one. */
  | { kind: 'none' }
  /** This process holds the lease until it releases it. */
  | { kind: 'held'; owner: string }
  /** Another process refreshed while this one waited: use its record. */
  | { kind: 'refreshed'; record: TokenRecord }

/** Tells an app's listener; one that throws does not break token handling. */
export const emit = notify

/** Grows a polling pause: doubling, up to half a second. */
export const backoff = (pause: number) => Math.min(pause * 2, 500)

/** The store side of the token manager, for all keys of this process. */
export class TokenStoreAccess {
  readonly keys: KeyStates
  /** Lease releases retried after a failure: `close()` waits for them. */
  protected readonly background = new Set<Promise<void>>()
  /** Set by `close()`: when store writes that keep failing are given up. */
  protected closeDeadline: number | undefined

  /** The records handed out without a store read, each until its time. */
  readonly kept: FreshRecords

  constructor(readonly s: ManagerSettings) {
    this.keys = new KeyStates(s.maxKeys)
    this.kept = new FreshRecords(s.clock, s.options.now !== undefined, 2 * s.maxKeys)
  }

  protected times(record: TokenRecord, now: number): TokenTimes {
    const lifetime =
      record.expiresAt - (record.obtainedAt ?? record.expiresAt - DEFAULT_LIFETIME_MS)
    return {
      now,
      refreshAt: record.expiresAt - Math.max(0, lifetime) * this.s.ratio,
      expiresAt: record.expiresAt,
    }
  }

  protected apply(key: string, event: TokenEvent): TokenState {
    const entry = this.keys.get(key)
    entry.state = transition(entry.state, event)
    return entry.state
  }

  /** Moves the key's state on to match a record just read (replaced, then the clock's tick). */
  protected advanceTo(key: string, record: TokenRecord): TokenState {
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
  protected keepFresh(key: string, record: TokenRecord): TokenRecord {
    const kept = Object.isFrozen(record) ? record : frozen(record)
    if (this.closeDeadline !== undefined) return kept
    const now = this.s.clock()
    this.kept.set(key, kept, Math.min(this.times(kept, now).refreshAt, now + this.s.revalidate))
    return kept
  }

  /** Drops the in-process token of `key` (it was refused, or the record changed state). */
  protected forgetFresh(key: string): void {
    this.kept.delete(key)
  }

  /** The connection must be authorized again: moves the state there, tells the app, rejects. */
  protected async fail(key: string, cause?: unknown): Promise<never> {
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

  protected async read(key: string): Promise<TokenRecord> {
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
  protected async write(
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
  protected async takeLease(key: string, base: TokenRecord): Promise<Lease> {
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

  protected pastCloseDeadline(): boolean {
    return this.closeDeadline !== undefined && performance.now() >= this.closeDeadline
  }

  /**
   * Runs a store call until it succeeds: with backoff, while the lease is renewed beside it.
   * For what must not be lost (new tokens that exist nowhere else); given up only once
   * `close()`'s time is out.
   */
  protected async persist<T>(key: string, call: () => Promise<T>): Promise<T> {
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
  protected keepLease(key: string, owner: string): () => void {
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
  protected async release(key: string, owner: string): Promise<void> {
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
}
