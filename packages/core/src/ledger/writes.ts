import type { Admission, Running } from './deliver.js'
import type { LedgerEntry, ResourceMark, StoredLedgerEntry } from './entry.js'
import { staleEntry } from './machine.js'
import { isNewer, markOf, ordered } from './order.js'
import type { LedgerStore } from './store.js'

// The ledger's writes: each a compare-and-set on a version, read again and retried when
// another write came first, so two processes never both move one entry or mark on.

/** How often a write lost to another is read and tried again. */
export const WRITE_TRIES = 8

/**
 * Writes what `next` makes of the entry, reading it again when another write came first.
 * `false` when `next` says the entry is no longer this owner's.
 */
export async function settle(
  store: Pick<LedgerStore, 'get' | 'write' | 'writeAdvancingMark'>,
  running: Running,
  next: (entry: LedgerEntry) => LedgerEntry | undefined,
  /** With the write, the resource's mark moved on (in one round trip when the store can). */
  mark?: ResourceMark,
): Promise<boolean> {
  let current: StoredLedgerEntry | undefined = running.entry
  for (let tries = 0; current !== undefined && tries <= WRITE_TRIES; tries++) {
    const written = next(current)
    if (written === undefined) return false
    const version =
      mark !== undefined && store.writeAdvancingMark !== undefined
        ? await store.writeAdvancingMark(written, current.version, mark)
        : await store.write(written, current.version)
    if (version !== undefined) {
      running.entry = { ...written, version }
      return true
    }
    current = await store.get(running.entry.id)
  }
  return false
}

/** Moves the resource's mark on to `mark`, unless a newer delivery moved it further. */
export async function advanceMark(
  store: Pick<LedgerStore, 'mark' | 'setMark'>,
  mark: ResourceMark,
): Promise<void> {
  for (let tries = 0; tries <= WRITE_TRIES; tries++) {
    const applied = await store.mark(mark.resourceId)
    if (!isNewer(mark, applied)) return
    if ((await store.setMark(mark, applied?.version)) !== undefined) return
  }
}

/**
 * The ordering guard (`ordered`): a run older than what its resource last applied is `stale`,
 * recorded so and not run, unless the ledger's `stale` option is `'run'`. A catch-up delivery
 * that something applied since its listing overtook is always recorded `stale`: run, it would
 * undo a live change.
 */
export async function checkOrder(
  store: Pick<LedgerStore, 'get' | 'write' | 'mark'>,
  running: Running,
  stale: 'skip' | 'run',
  now: () => number,
  /** The resource's mark when the write read it already (`writeReadingMark`). */
  read?: { mark: ResourceMark | undefined },
): Promise<Admission> {
  const mark = markOf(running.entry)
  if (mark === undefined) return { action: 'run', running }
  const applied = read === undefined ? await store.mark(mark.resourceId) : read.mark
  const order = ordered(running.entry, applied)
  if (order.action === 'run')
    return {
      action: 'run',
      running: order.mark === undefined ? running : { ...running, mark: order.mark },
    }
  if (stale === 'run' && running.entry.source !== 'catch-up')
    return { action: 'run', running: { ...running, stale: true } }
  await settle(store, running, (entry) => staleEntry(entry, now()))
  return { action: 'skip', status: 'stale' }
}

/**
 * Writes an arrival's entry by compare-and-set and, when it names a resource, reads that
 * resource's mark: in one round trip when the store can (`writeReadingMark`).
 */
export async function writeArrival(
  store: LedgerStore,
  entry: LedgerEntry,
  expected: number | undefined,
): Promise<{ version: number | undefined; read?: { mark: ResourceMark | undefined } }> {
  const resourceId = markOf(entry)?.resourceId
  if (resourceId === undefined || store.writeReadingMark === undefined)
    return { version: await store.write(entry, expected) }
  const { version, mark } = await store.writeReadingMark(entry, expected, resourceId)
  return { version, read: { mark } }
}
