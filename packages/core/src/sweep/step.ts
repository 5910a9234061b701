import { newOwnerId } from '../claims/owner.js'
import { dueIn, type PhaseRange, phasesDue, shardOf, slotOf, stepWindow } from './schedule.js'
import type { SweepCheckpoint, SweepStore } from './store.js'

// The executor of a rolling schedule (`schedule.ts`), whatever is done to each key: one step
// takes the shards no other instance holds, reads each one's checkpoint, finds the keys whose
// turn came since (one read of the keys of those windows' phases), hands each shard's keys to `run`, and moves the shard's
// checkpoint by compare-and-set once `run` is done. A step killed halfway leaves the checkpoint
// of the shard it was on: the next holder, once the lease lapses, does that window again.

export interface StepSettings {
  store: SweepStore
  /** Lease and checkpoint names: `<name>:<shard>`. */
  name: string
  periodMs: number
  shards: number
  maxStepMs: number
  leaseTtlMs: number
}

/** How a step of a rolling schedule runs. */
export interface StepOptions {
  /**
   * Try again what failed at earlier steps. Default true; the periodic work's steps after the
   * first of a call pass false, so a failure is retried once a call, not at every step of it.
   */
  retry?: boolean
}

/** What one step did with the shards. */
export interface StepOutcome {
  /** Shards stepped here, shards another instance held. */
  shards: number
  busyShards: number
  /** Keys whose turn came. */
  due: number
  /** How far behind `now` the furthest shard stepped still is, in ms. */
  behindMs: number
  /** Shards whose checkpoint another instance moved meanwhile (this step's lease lapsed). */
  overtaken: string[]
}

/** The counts of a step's outcome a report tells. */
export const stepCounts = ({ shards, busyShards, due, behindMs }: StepOutcome) => ({
  shards,
  busyShards,
  due,
  behindMs,
})

/** One shard held for a step: its lease name, checkpoint and window, its keys due. */
interface HeldShard {
  name: string
  checkpoint: SweepCheckpoint | undefined
  from: number
  to: number
  due: string[]
}

/** One step at `now` over the shards free to take: each one's due keys given to `run`. */
export async function stepShards(
  settings: StepSettings,
  now: number,
  /** The keys: with `phases`, at least those whose phase falls in it (any more are passed over). */
  keys: (phases?: PhaseRange) => AsyncIterable<string>,
  run: (due: readonly string[]) => Promise<void>,
): Promise<StepOutcome> {
  const { store, shards, leaseTtlMs, periodMs, maxStepMs } = settings
  const owner = newOwnerId()
  const outcome: StepOutcome = { shards: 0, busyShards: 0, due: 0, behindMs: 0, overtaken: [] }
  const held = new Map<number, HeldShard>()
  // Starting at a shard drawn at random: instances stepping at once take different shards.
  const first = Math.floor(Math.random() * shards)
  for (let i = 0; i < shards; i++) {
    const shard = (first + i) % shards
    const name = `${settings.name}:${shard}`
    if (!(await store.acquireLease(name, owner, leaseTtlMs))) {
      outcome.busyShards++
      continue
    }
    const checkpoint = await store.checkpoint(name)
    const window = stepWindow(checkpoint?.through, now, periodMs, maxStepMs)
    held.set(shard, { name, checkpoint, ...window, due: [] })
  }
  const renew = setInterval(
    () => {
      for (const shard of held.values())
        store.acquireLease(shard.name, owner, leaseTtlMs).catch(() => {})
    },
    Math.floor(leaseTtlMs / 3),
  )
  ;(renew as { unref?: () => void }).unref?.()
  try {
    const phases = phasesDue([...held.values()], periodMs)
    if (phases !== 'none')
      for await (const key of phases === 'all' ? keys() : keys(phases)) {
        const shard = held.get(shardOf(key, shards))
        if (shard !== undefined && dueIn(slotOf(key, periodMs), periodMs, shard.from, shard.to))
          shard.due.push(key)
      }
    for (const shard of held.values()) {
      outcome.due += shard.due.length
      await run(shard.due)
      const moved = await store.setCheckpoint(shard.name, shard.to, shard.checkpoint?.version)
      if (moved === undefined) outcome.overtaken.push(shard.name)
      outcome.shards++
      outcome.behindMs = Math.max(outcome.behindMs, now - shard.to)
    }
  } finally {
    clearInterval(renew)
    await Promise.all(
      [...held.values()].map((s) => store.releaseLease(s.name, owner).catch(() => {})),
    )
  }
  return outcome
}

/** Runs `work` on each of `items`, `concurrency` at a time. */
export async function eachOf<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) await work(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
}
