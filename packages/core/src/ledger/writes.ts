import type { Admission, Running } from './deliver.js'
import type { LedgerEntry, StoredLedgerEntry } from './entry.js'
import { isNewer, markOf, staleEntry } from './machine.js'
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
  store: Pick<LedgerStore, 'get' | 'write'>,
  running: Running,
  next: (entry: LedgerEntry) => LedgerEntry | undefined,
): Promise<boolean> {
  let current: StoredLedgerEntry | undefined = running.entry
  for (let tries = 0; current !== undefined && tries <= WRITE_TRIES; tries++) {
    const written = next(current)
    if (written === undefined) return false
    const version = await store.write(written, current.version)
    if (version !== undefined) {
      running.entry = { ...written, version }
      return true
    }
    current = await store.get(running.entry.id)
  }
  return false
}

/** Moves the resource's mark on to `entry`, unless a newer delivery moved it further. */
export async function advanceMark(
  store: Pick<LedgerStore, 'mark' | 'setMark'>,
  entry: LedgerEntry,
): Promise<void> {
  const mark = markOf(entry)
  if (mark === undefined) return
  for (let tries = 0; tries <= WRITE_TRIES; tries++) {
    const applied = await store.mark(mark.resourceId)
    if (!isNewer(mark, applied)) return
    if ((await store.setMark(mark, applied?.version)) !== undefined) return
  }
}

/**
 * The ordering guard: a run older than what its resource last applied is `stale`, recorded so
 * and not run, unless the ledger's `stale` option is `'run'`.
 */
export async function checkOrder(
  store: Pick<LedgerStore, 'get' | 'write' | 'mark'>,
  running: Running,
  stale: 'skip' | 'run',
  now: () => number,
): Promise<Admission> {
  const mark = markOf(running.entry)
  if (mark === undefined) return { action: 'run', running }
  if (isNewer(mark, await store.mark(mark.resourceId))) return { action: 'run', running }
  if (stale === 'run') return { action: 'run', running: { ...running, stale: true } }
  await settle(store, running, (entry) => staleEntry(entry, now()))
  return { action: 'skip', status: 'stale' }
}
