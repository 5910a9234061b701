import { newOwnerId } from '../claims/owner.js'
import { settleClaim } from '../claims/run-once.js'
import { sleep } from '../sleep.js'
import type { LedgerStore } from './store.js'

// One resource's deliveries take turns: in this process, one after the other in the order they
// arrived (one async call and a promise per waiter only when there is one: no chain of
// promises); across processes, under the resource's hold when the store has holds, renewed
// with the ledger's leases.

/**
 * How long a hold's release is tried again through a store blip, as a claim's is: a hold left
 * behind keeps the resource's next deliveries waiting (then 409) until its lease lapses.
 */
const RELEASE_SETTLE_MS = 5_000

/** What the turns read of the ledger's settings. */
interface TurnSettings {
  readonly store: LedgerStore
  readonly leaseMs: number
  readonly orderWaitMs: number
  readonly now: () => number
}

/** A resource held across processes, and its renewals under way, if any. */
interface Held {
  resourceId: string
  owner: string
  renewing?: Promise<unknown>
}

export class ResourceTurns {
  /** Each resource with work running here, and the works waiting behind it (each woken in turn). */
  readonly #turns = new Map<string, (() => void)[]>()
  /** The deliveries queued or running in their resource's turn here. */
  readonly #inTurn = new Set<string>()
  /** The resources this process holds across processes now: renewed with the leases. */
  readonly #resources = new Set<Held>()

  constructor(readonly settings: TurnSettings) {}

  /** How many resources this process holds across processes now. */
  get holding(): number {
    return this.#resources.size
  }

  /** Whether a delivery is queued or running in its resource's turn in this process. */
  inTurnHere(id: string): boolean {
    return this.#inTurn.has(id)
  }

  /**
   * Runs `work` once every earlier work of this process on the resource has ended and, with a
   * store several processes share, once this process holds the resource (`busy` when another
   * process's delivery of it did not end within `orderWaitMs`).
   */
  async inTurn<T>(resourceId: string, id: string, work: () => Promise<T>, busy: T): Promise<T> {
    this.#inTurn.add(id)
    try {
      const waiting = this.#turns.get(resourceId)
      if (waiting === undefined) this.#turns.set(resourceId, [])
      else await new Promise<void>((resolve) => waiting.push(resolve))
      try {
        return await this.#holding(resourceId, work, busy)
      } finally {
        // The next in line runs now (its resource's entry stays); none: the resource is free.
        const next = this.#turns.get(resourceId)!.shift()
        if (next === undefined) this.#turns.delete(resourceId)
        else next()
      }
    } finally {
      this.#inTurn.delete(id)
    }
  }

  /** Renews every hold this process has across processes (the ledger's lease timer). */
  renew(): void {
    const { store, now, leaseMs } = this.settings
    for (const held of this.#resources) {
      const renewal = store
        .holdResource?.(held.resourceId, held.owner, now() + leaseMs, now())
        .catch(() => {})
      // Every renewal under way, not the last only: each must land before the release.
      held.renewing = held.renewing === undefined ? renewal : Promise.all([held.renewing, renewal])
    }
  }

  /** `work` under the resource's hold across processes, when the store has holds. */
  #holding<T>(resourceId: string, work: () => Promise<T>, busy: T): Promise<T> {
    return this.settings.store.holdResource === undefined
      ? work()
      : this.#heldAcross(resourceId, work, busy)
  }

  async #heldAcross<T>(resourceId: string, work: () => Promise<T>, busy: T): Promise<T> {
    const { store, now, leaseMs, orderWaitMs } = this.settings
    const owner = newOwnerId()
    const take = () => store.holdResource!(resourceId, owner, now() + leaseMs, now())
    if (!(await waitFor(take, orderWaitMs))) return busy
    const resource: Held = { resourceId, owner }
    this.#resources.add(resource)
    try {
      return await work()
    } finally {
      this.#resources.delete(resource)
      // A renewal under way lands first: one landing after the release would take the
      // resource again (a store holds a free resource for whoever asks), left held until it
      // lapsed, its Event's later deliveries answered 409 meanwhile.
      await resource.renewing
      await settleClaim(async () => {
        await store.holdResource!(resourceId, owner, 0, now())
      }, RELEASE_SETTLE_MS).catch(() => {})
    }
  }
}

/**
 * Tries `take` until it succeeds or `waitMs` passed: 20 ms apart at first, doubling to 250.
 * A store failure is thrown.
 */
async function waitFor(take: () => Promise<boolean>, waitMs: number): Promise<boolean> {
  const until = Date.now() + waitMs
  for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
    if (await take()) return true
    if (Date.now() + pause > until) return false
    await sleep(pause)
  }
}
