import { randomBytes } from 'node:crypto'
import type { LedgerEntry, LedgerStore, StoredLedgerEntry } from '@scheduling-kit/core'
import { accountKey } from '@scheduling-kit/core/store'
import type { StoreConformanceOptions } from './conformance-options.js'

// What the ledger store battery's parts share: the entries they write, how they compare them,
// and the store they are given.

export const tag = () => randomBytes(4).toString('hex')

/**
 * An entry; its id names its account as the ledger's do (`accountKey`): alice's when it has
 * none, so a store may keep an account's entries together.
 */
export function entry(overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  const id = overrides.id ?? accountKey(overrides.account ?? 'alice', `payload_${tag()}`)
  return {
    id,
    payloadId: `payload_${tag()}`,
    type: 'event.created',
    source: 'webhook',
    status: 'processing',
    attempts: 1,
    receivedAt: Date.now(),
    updatedAt: Date.now(),
    owner: 'owner-a',
    leaseUntil: Date.now() + 60_000,
    ...overrides,
  }
}

/** The entry as written, without the version the store adds. */
export const fieldsOf = ({ version: _version, ...rest }: StoredLedgerEntry) => rest

/** The entry without its body. */
export const withoutBody = ({ body: _b, bodyExpiresAt: _x, ...rest }: LedgerEntry): LedgerEntry =>
  rest

/** What the kit asks of a store it makes: a bound of its own for one test. */
export interface LedgerStoreKitOptions {
  /** The store's `maxBodiesPerAccount`. */
  maxBodiesPerAccount?: number
}

export type It = StoreConformanceOptions['it']
export type Make = (options?: LedgerStoreKitOptions) => LedgerStore | Promise<LedgerStore>
