import { encodeStoreKey } from '@scheduling-kit/core/store'

// Where a Redis ledger's keys are. Every key of one ledger shares one hash tag, the prefix
// itself (encoded: no brace can end it early), so each write and the indexes it moves are one
// atomic script, one round trip, on a single server and on a Cluster alike (one slot).
//
// An entry is a hash: `v` its version, `e` the entry as JSON without its body, `b` the body,
// `x` when the body expires, `s` status, `t` type, `r` first recorded, `a` account, `c` its body
// capped. Sorted sets index entries by first recording (all, and per account), bodies by expiry
// (all, and each account's kept ones), and resource marks by horizon.

/** The keys of one ledger under `prefix`. */
export class LedgerKeys {
  /** What every key starts with: `<prefix>ledger:{<prefix>}:`. */
  readonly base: string
  /** The index of every entry by first recording. */
  readonly byTime: string
  /** The index of bodies by expiry. */
  readonly bodies: string
  /** The index of resource marks by horizon. */
  readonly marks: string

  constructor(prefix: string) {
    this.base = `${prefix}ledger:{${encodeStoreKey(prefix, (k) => k.includes('}'))}}:`
    this.byTime = `${this.base}by-time`
    this.bodies = `${this.base}bodies`
    this.marks = `${this.base}marks`
  }

  /** An entry's hash; the scripts that walk an index add the id to `entry('')`. */
  entry(id: string): string {
    return `${this.base}e:${id}`
  }

  /** An account's index of entries by first recording. */
  account(account: string): string {
    return `${this.base}account:${account}`
  }

  /** An account's kept bodies, by expiry. */
  kept(account: string): string {
    return `${this.base}kept:${account}`
  }

  /** A resource's mark (what was last applied to it). */
  mark(resourceId: string): string {
    return `${this.base}m:${resourceId}`
  }

  /** A resource's hold (one runner at a time). */
  hold(resourceId: string): string {
    return `${this.base}h:${resourceId}`
  }
}
