// The rolling schedule of a sweep, planned without I/O: each account has its own time in every
// period (an offset drawn from a hash of its key, so a million accounts spread evenly, never
// all at once) and its own shard (a second hash, so each shard's accounts spread over the whole
// period too and instances holding different shards share every stretch of it). A step covers
// a window of time; an account is due in a window when its time falls in it. Windows that meet
// end to end cover each account once per period, whatever their sizes.

/** A 32-bit FNV-1a hash of `text`, seeded: two seeds give two independent draws. */
function hash(text: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  // Murmur's finaliser: FNV's low bits alone spread short keys poorly.
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** Where in each period of `periodMs` the account is checked: an offset in [0, periodMs). */
export function slotOf(key: string, periodMs: number): number {
  // Two draws make 53 bits, so a period of any length is spread without a bias worth naming.
  const draw = hash(key, 0x5bd1e995) * 0x200000 + (hash(key, 0x1b873593) & 0x1fffff)
  return draw % periodMs
}

/** The shard of the account, of `shards`. */
export function shardOf(key: string, shards: number): number {
  return hash(key, 0x27d4eb2f) % shards
}

/** Whether a time `t` with `t mod periodMs == slot` falls in the window (from, to]. */
export function dueIn(slot: number, periodMs: number, from: number, to: number): boolean {
  if (to <= from) return false
  if (to - from >= periodMs) return true
  const next = from - mod(from, periodMs) + slot
  return (next > from ? next : next + periodMs) <= to
}

const mod = (a: number, b: number) => ((a % b) + b) % b

/** What a shard's next step covers: from its checkpoint to now, at most `maxStepMs`. */
export interface StepWindow {
  from: number
  to: number
}

/**
 * The window of a shard's step. A shard never stepped starts now (its first accounts come due
 * in the next steps: nothing is checked all at once on a first deploy); one behind by more than
 * a period starts a period back (every account once); one behind by more than `maxStepMs` goes
 * on `maxStepMs` at a time, so a sweep that was stopped catches up over several steps.
 */
export function stepWindow(
  checkpoint: number | undefined,
  now: number,
  periodMs: number,
  maxStepMs: number,
): StepWindow {
  if (checkpoint === undefined) return { from: now, to: now }
  const from = Math.max(checkpoint, now - periodMs)
  return { from, to: Math.min(now, from + maxStepMs) }
}
