// The accounts a sweep passed over as healthy, watched until their last delivery is
// `healthyWithin` old: one that received nothing newer by then has stopped delivering, and is
// listed then, not at its next turn a period later. Kept in this process, bounded.

interface Watched {
  due: number
  key: string
  last: number
}

/** A min-heap of watched accounts by the time their last delivery goes stale. */
export class HealthWatch {
  readonly #heap: Watched[] = []
  readonly #keys = new Set<string>()

  /** `max`: the most accounts watched; past it, an account waits for its turn. */
  constructor(readonly max = 1_000_000) {}

  /** Watches `key`, whose last delivery was at `last`, until `due`. False when full or watched. */
  watch(key: string, last: number, due: number): boolean {
    if (this.#keys.has(key) || this.#heap.length >= this.max) return false
    this.#keys.add(key)
    const heap = this.#heap
    heap.push({ due, key, last })
    for (let i = heap.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1
      if (heap[parent]!.due <= heap[i]!.due) break
      ;[heap[i], heap[parent]] = [heap[parent]!, heap[i]!]
      i = parent
    }
    return true
  }

  /** Takes out every account whose time came by `now`, with the delivery it was watched from. */
  takeDue(now: number): Array<{ key: string; last: number }> {
    const due: Array<{ key: string; last: number }> = []
    while (this.#heap.length > 0 && this.#heap[0]!.due <= now) {
      const top = this.#pop()
      this.#keys.delete(top.key)
      due.push({ key: top.key, last: top.last })
    }
    return due
  }

  #pop(): Watched {
    const heap = this.#heap
    const top = heap[0]!
    const last = heap.pop()!
    if (heap.length === 0) return top
    heap[0] = last
    for (let i = 0; ; ) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < heap.length && heap[l]!.due < heap[m]!.due) m = l
      if (r < heap.length && heap[r]!.due < heap[m]!.due) m = r
      if (m === i) break
      ;[heap[i], heap[m]] = [heap[m]!, heap[i]!]
      i = m
    }
    return top
  }
}
