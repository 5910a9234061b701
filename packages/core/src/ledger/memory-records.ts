import type { LedgerEntry, ResourceMark, StoredLedgerEntry } from './entry.js'

// What the memory ledger store keeps of an entry and a mark, and what each takes against its
// `maxBytes`.

/** What a record costs besides its long texts: the object, its map slot, its short fields. */
export const RECORD_BYTES = 512

/**
 * What an entry takes (see `maxBytes`): its body, id and last error by their length, the rest
 * (fields of at most a few hundred characters) in a fixed cost. Four reads, not a walk over
 * every field: it is counted on each of a delivery's writes.
 */
export function bytesOf(entry: LedgerEntry): number {
  return RECORD_BYTES + entry.id.length + (entry.body?.length ?? 0) + (entry.lastError?.length ?? 0)
}

/**
 * The store's own copy of an entry, every field named: `{ ...entry, version }` at this one
 * place sees entries of every stage (arrived, done, failed, without a body) and V8 then copies
 * them property by property, about ten times the cost of this literal.
 */
export function copyOf(entry: LedgerEntry, version: number): StoredLedgerEntry {
  return {
    id: entry.id,
    payloadId: entry.payloadId,
    type: entry.type,
    webhookId: entry.webhookId,
    account: entry.account,
    resourceId: entry.resourceId,
    resourceState: entry.resourceState,
    resourceDigest: entry.resourceDigest,
    resourceWhen: entry.resourceWhen,
    occurredAt: entry.occurredAt,
    listedAt: entry.listedAt,
    status: entry.status,
    attempts: entry.attempts,
    lastError: entry.lastError,
    source: entry.source,
    receivedAt: entry.receivedAt,
    updatedAt: entry.updatedAt,
    body: entry.body,
    bodyExpiresAt: entry.bodyExpiresAt,
    bodyCapped: entry.bodyCapped,
    owner: entry.owner,
    leaseUntil: entry.leaseUntil,
    version,
  }
}

/** A copy of a kept entry as it was written: the fields it has (`copyOf` names them all). */
export function definedOf(entry: StoredLedgerEntry): StoredLedgerEntry {
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(entry)) if (value !== undefined) copy[key] = value
  return copy as unknown as StoredLedgerEntry
}

/** What a mark takes, counted by its text. */
export function markBytesOf(mark: ResourceMark): number {
  return (
    RECORD_BYTES +
    mark.resourceId.length * 2 +
    mark.by.length +
    (mark.state?.length ?? 0) +
    (mark.digest?.length ?? 0) +
    (mark.when?.length ?? 0)
  )
}
