import { encodeStoreKey, scopeOfKey } from '@scheduling-kit/core/store'
import { shardOf, spreadOverSlots } from './slots.js'

// Where a Redis ledger's keys are. The ledger is split in shards by account: every key of one
// shard shares one hash tag, so each write and the indexes it moves are one atomic script, one
// round trip, in one Cluster slot; the shards' tags are chosen to fall evenly over the slots, so
// on a Cluster the shards, and the accounts with them, spread over the masters. An account's
// entries, marks and holds are all in its shard (an entry's id and a mark's resource name the
// account: `accountKey`); those of a delivery of no account verified by a secret lookup are in
// the shard of its webhook's identity (`identityKey`), so a lookup's webhooks spread too; the
// rest (one static secret) are in the shard of ''.
//
// With one shard (a single server's default), the tag is the prefix itself (encoded: no brace
// can end it early), the layout of every ledger before shards.
//
// An entry is a hash: `v` its version, `e` the entry as JSON without its body, `b` the body,
// `x` when the body expires, `s` status, `t` type, `r` first recorded, `a` account, `c` its body
// capped. Sorted sets of each shard index its entries by first recording (all, and per account),
// its bodies by expiry (all, and each account's kept ones), and its resource marks by horizon.

/**
 * An id, account or resource as the keys and the indexes' members hold it: lossless
 * (`encodeStoreKey`), so two that differ only in a lone surrogate (both U+FFFD in UTF-8) stay
 * two; a well-formed one is itself, the layout of every ledger before.
 */
export const storedKey = (key: string): string => encodeStoreKey(key)

/** The keys of one shard of a ledger. */
export class LedgerShard {
  /** What every key of the shard starts with: `<prefix>ledger:{<tag>}:`. */
  readonly base: string
  /** The index of the shard's entries by first recording. */
  readonly byTime: string
  /** The index of the shard's bodies by expiry. */
  readonly bodies: string
  /** The index of the shard's resource marks by horizon. */
  readonly marks: string

  constructor(base: string) {
    this.base = base
    this.byTime = `${base}by-time`
    this.bodies = `${base}bodies`
    this.marks = `${base}marks`
  }

  /** An entry's hash; the scripts that walk an index add the stored id to `entry('')`. */
  entry(id: string): string {
    return `${this.base}e:${storedKey(id)}`
  }

  /** An account's index of entries by first recording. */
  account(account: string): string {
    return `${this.base}account:${storedKey(account)}`
  }

  /** An account's kept bodies, by expiry; the scripts add the stored account to `kept('')`. */
  kept(account: string): string {
    return `${this.base}kept:${storedKey(account)}`
  }

  /** A resource's mark (what was last applied to it). */
  mark(resourceId: string): string {
    return `${this.base}m:${storedKey(resourceId)}`
  }

  /** A resource's hold (one runner at a time). */
  hold(resourceId: string): string {
    return `${this.base}h:${storedKey(resourceId)}`
  }
}

/** The most shards a ledger has. */
export const MAX_SHARDS = 256

/** The keys of one ledger under `prefix`, in `shards` shards. */
export class LedgerKeys {
  readonly shards: readonly LedgerShard[]

  constructor(prefix: string, shards: number) {
    const tag = encodeStoreKey(prefix, (k) => k.includes('}'))
    const base = (suffix: string) => `${prefix}ledger:{${tag}${suffix}}:`
    this.shards =
      shards === 1
        ? [new LedgerShard(base(''))]
        : spreadOverSlots((n) => base(`#${n}`), shards).map((n) => new LedgerShard(base(`#${n}`)))
  }

  /** The shard of an account (`''`: entries and marks of no account). */
  ofAccount(account: string | undefined): LedgerShard {
    return this.shards[shardOf(account ?? '', this.shards.length)]!
  }

  /**
   * The shard of an entry's id or a mark's resource: its account's (`accountKey`), else its
   * webhook identity's (`identityKey`).
   */
  of(key: string): LedgerShard {
    return this.shards.length === 1 ? this.shards[0]! : this.ofAccount(scopeOfKey(key))
  }
}
