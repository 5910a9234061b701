import { serverText } from '../errors/errors.js'
import { randomToken } from '../platform/bytes.js'
import type { ConnectionApp, TokenRecord } from './record.js'
import type { TokenStore } from './store.js'

// The connection a token record stands for: which service account a key is connected to,
// which generation of the connection (a new nonce on every connect; none once disconnected),
// and which app it was made for. Everything here is pure but the in-process notice board
// through which the routes tell every token manager of the same store about a change at once.

/** Where a key's connection stands, as `status(key)` answers it. */
export interface ConnectionStatus {
  key: string
  /**
   * `connected`: tokens are stored and usable (or refreshable); `needs_reauth`: the refresh
   * token was refused, the owner must connect again; `disconnected`: no tokens are stored.
   */
  state: 'connected' | 'needs_reauth' | 'disconnected'
  /** The service account the key is connected to (`GET /me`'s `id`), when known. */
  accountId?: string
  /** The connection's generation: a new value on every connect. */
  connection?: string
  /** When the current access token expires, epoch milliseconds. */
  expiresAt?: number
  /** With subscriptions: the state of the key's webhook. */
  webhook?: WebhookStatus
  /**
   * Why the stored record was refused, with `state` `disconnected`: it was made for another
   * app, or it is an older connection than this process already used (a restored backup, a
   * replica behind). Its account and expiry are not told: they are not this connection's.
   */
  refused?: string
}

/** The key's webhook, as the subscriptions know it. */
export interface WebhookStatus {
  /**
   * `active`: a live webhook is stored; `pending`: the account should have one but has none yet
   * (`reconcile` creates it); `removed`: the account was removed; `none`: no record at all.
   */
  state: 'active' | 'pending' | 'removed' | 'none'
  /** The live webhook's id. */
  id?: string
}

/** A change in a key's connection, told to `onConnectionChange`. */
export type ConnectionChange =
  | { type: 'connected'; key: string; accountId?: string }
  /** The key was connected to one service account and is now connected to another. */
  | { type: 'reconnected'; key: string; accountId?: string; previousAccountId?: string }
  | { type: 'disconnected'; key: string; accountId?: string }
  /** The refresh token was refused: the owner must connect again. */
  | { type: 'needs_reauth'; key: string; accountId?: string }
  /** `reconcile` or `ensure` repaired the key's webhook (what it did, in words). */
  | { type: 'webhook_repaired'; key: string; actions: string[] }
  /**
   * Refresh ahead could not refresh the key's token (the token endpoint failed or did not
   * answer: `error`, its code); tried again at each step. Told once, until it recovers.
   */
  | { type: 'refresh_failing'; key: string; error: string }
  /** Refresh ahead refreshed a key it had told failing. */
  | { type: 'refresh_recovered'; key: string }

/** The id of the service account a record is connected to, as text; `undefined` when unknown. */
export function accountIdOf(record: Pick<TokenRecord, 'account'> | undefined): string | undefined {
  const id = record?.account?.id as unknown
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined
}

/** A record's connection status (`webhook` left for the subscriptions to add). */
export function statusOf(key: string, record: TokenRecord | undefined): ConnectionStatus {
  if (record === undefined) return { key, state: 'disconnected' }
  const status: ConnectionStatus = {
    key,
    state: record.reauthorizationRequired === true ? 'needs_reauth' : 'connected',
    expiresAt: record.expiresAt,
  }
  const accountId = accountIdOf(record)
  if (accountId !== undefined) status.accountId = accountId
  if (record.connection !== undefined) status.connection = record.connection
  return status
}

/**
 * Whether a record was made for another app than `app`: an address both name and that differs.
 * A record that names none (stored before records named their app) belongs to every app.
 */
export function madeForOtherApp(
  record: { app?: ConnectionApp } | undefined,
  app: ConnectionApp,
): boolean {
  const made = record?.app
  if (made === undefined) return false
  return (['tokenUrl', 'apiUrl', 'webhookUrl'] as const).some(
    (field) => made[field] !== undefined && app[field] !== undefined && made[field] !== app[field],
  )
}

/**
 * What makes a record another app's, in words: each address it names that differs from this
 * app's, both given (the record's cleaned: a store's writer chose it).
 */
export function otherAppWhy(record: { app?: ConnectionApp }, app: ConnectionApp): string {
  const made = record.app ?? {}
  return (['tokenUrl', 'apiUrl', 'webhookUrl'] as const)
    .filter((f) => made[f] !== undefined && app[f] !== undefined && made[f] !== app[f])
    .map(
      (f) =>
        `it was made for ${f} ${JSON.stringify(serverText(String(made[f]), 200))}, this app's is ${JSON.stringify(app[f])}`,
    )
    .join('; ')
}

/**
 * A new connection's generation: `<stamp>.<nonce>`, the stamp (milliseconds, base 36) later
 * than the connection it replaces even when this machine's clock is behind the one that made
 * it, the nonce random. Generations order connections: a record whose generation is older than
 * one already seen was rolled back.
 */
export function newConnection(previous?: string, now: number = Date.now()): string {
  const floor = connectionStamp(previous)
  const stamp = floor === undefined ? now : Math.max(now, floor + 1)
  return `${stamp.toString(36)}.${randomToken(16)}`
}

const STAMPED = /^([0-9a-z]{1,11})\.[A-Za-z0-9_-]+$/

/**
 * When a connection was made, from its generation; `undefined` for one that names no time (a
 * record stored before generations were stamped, or written by the app).
 */
export function connectionStamp(connection: unknown): number | undefined {
  if (typeof connection !== 'string') return undefined
  const match = STAMPED.exec(connection)
  if (match === null) return undefined
  const stamp = Number.parseInt(match[1]!, 36)
  return Number.isSafeInteger(stamp) ? stamp : undefined
}

/**
 * Why a record is refused as rolled back, or `undefined` when it may be used: its generation is
 * older than `newest`, the newest this process has seen for the key (after a reconnection, a
 * restored backup or a replica behind holds the old connection, maybe another account's).
 */
export function rolledBackWhy(
  record: Pick<TokenRecord, 'connection'>,
  newest: number | undefined,
): string | undefined {
  const stamp = connectionStamp(record.connection)
  if (stamp === undefined || newest === undefined || stamp >= newest) return undefined
  return `the stored record is a connection made at ${new Date(stamp).toISOString()}, older than the one this process already used (made at ${new Date(newest).toISOString()}): it was rolled back (a restored backup, a replica behind) and is not used`
}

/** Who hears of a key's connection changing in this process, per token store. */
type Listener = (key: string) => void
const boards = new WeakMap<object, Set<Listener>>()

/**
 * Tells every token manager of this process that reads `store` that the connection of `key`
 * changed (connected, reconnected, disconnected): each drops what it kept of the key at once.
 * The OAuth routes call it after every write of theirs; an app that writes the token store
 * itself calls it too (or `manager.forget(key)`).
 */
export function announceConnectionChange(store: TokenStore, key: string): void {
  const listeners = boards.get(store)
  if (listeners === undefined) return
  for (const listener of listeners) {
    try {
      listener(key)
    } catch {
      // One listener failing must not keep the others from hearing.
    }
  }
}

/** Listens for changes announced on `store`; returns the function that stops listening. */
export function listenForConnectionChanges(store: TokenStore, listener: Listener): () => void {
  let listeners = boards.get(store)
  if (listeners === undefined) {
    listeners = new Set()
    boards.set(store, listeners)
  }
  listeners.add(listener)
  return () => listeners.delete(listener)
}
