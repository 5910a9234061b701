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

/** How many phases there are: an account's phase is a whole number below it. */
export const PHASES = 2 ** 32

/**
 * Where the account's time falls in every period, whatever its length: a whole number in
 * [0, 2^32), the period's fraction `phase / 2^32`. What a store may index its keys by, so a step
 * reads only the keys of its window (`SubscriptionStore.keys(phases)`).
 */
export function phaseOf(key: string): number {
  return hash(key, 0x5bd1e995)
}

/** Where in each period of `periodMs` the account is checked: an offset in [0, periodMs). */
export function slotOf(key: string, periodMs: number): number {
  return slotOfPhase(phaseOf(key), periodMs)
}

const slotOfPhase = (phase: number, periodMs: number) => Math.floor((phase / PHASES) * periodMs)

/**
 * Phases from `from` (included) to `to` (excluded); past the last phase when `from > to`, on
 * from the first: `[from, 2^32)` and `[0, to)`.
 */
export interface PhaseRange {
  from: number
  to: number
}

/** Whether `phase` falls in `range`. */
export function inPhases(phase: number, range: PhaseRange): boolean {
  return range.from <= range.to
    ? phase >= range.from && phase < range.to
    : phase >= range.from || phase < range.to
}

/**
 * The phases of the accounts due in any of `windows` (each as `dueIn` reads it): `'none'` when
 * no window is open, `'all'` when together they span a period, else one range that holds every
 * due account's phase (and a few more around its ends: a reader filters by `dueIn`).
 */
export function phasesDue(
  windows: readonly StepWindow[],
  periodMs: number,
): PhaseRange | 'none' | 'all' {
  const open = windows.filter((w) => w.to > w.from)
  if (open.length === 0) return 'none'
  const from = Math.min(...open.map((w) => w.from))
  const to = Math.max(...open.map((w) => w.to))
  if (to - from >= periodMs) return 'all'
  // Due: the slots after `from`'s and up to `to`'s in the period, (a, b], b past the period's
  // end when the window wraps. A slot s holds the phases from s/P of 2^32 up to (s+1)/P.
  const a = mod(from, periodMs)
  const b = a + (to - from)
  const low = Math.max(0, Math.floor(((a + 1) / periodMs) * PHASES) - 2)
  const high = Math.ceil(((b + 1) / periodMs) * PHASES) + 2
  if (high <= PHASES) return { from: low, to: high }
  const wrapped = high - PHASES
  return wrapped >= low ? 'all' : { from: low, to: wrapped }
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

/** The last time at or before `now` that falls on `slot` in every period of `periodMs`. */
export function lastTurn(slot: number, periodMs: number, now: number): number {
  return now - mod(now - slot, periodMs)
}

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
