// A virtual clock: time moves only when every task waiting on it is waiting, to the next timer.
// The code under test is given `now` and `sleep` of it; the driver steps it to an end.

interface Timer {
  at: number
  seq: number
  fire: () => void
}

export class VirtualClock {
  #now: number
  #seq = 0
  readonly #heap: Timer[] = []

  constructor(start: number) {
    this.#now = start
  }

  readonly now = (): number => this.#now

  /** Resolves once the clock has moved `ms` on. */
  readonly sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => this.at(this.#now + Math.max(0, ms), resolve))

  /** Runs `fire` when the clock reaches `at`. */
  at(at: number, fire: () => void): void {
    const timer = { at, seq: this.#seq++, fire }
    const heap = this.#heap
    heap.push(timer)
    for (let i = heap.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1
      if (!before(heap[i]!, heap[parent]!)) break
      ;[heap[i], heap[parent]] = [heap[parent]!, heap[i]!]
      i = parent
    }
  }

  #pop(): Timer | undefined {
    const heap = this.#heap
    const top = heap[0]
    const last = heap.pop()
    if (top === undefined || last === undefined || heap.length === 0) return top
    heap[0] = last
    for (let i = 0; ; ) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < heap.length && before(heap[l]!, heap[m]!)) m = l
      if (r < heap.length && before(heap[r]!, heap[m]!)) m = r
      if (m === i) break
      ;[heap[i], heap[m]] = [heap[m]!, heap[i]!]
      i = m
    }
    return top
  }

  /**
   * Fires the timers due up to `end` in order of time, letting the tasks they wake run to their
   * next wait (the microtasks, then a turn of the event loop) before the clock moves again.
   */
  async runUntil(end: number): Promise<void> {
    for (;;) {
      await settle()
      const next = this.#heap[0]
      if (next === undefined || next.at > end) break
      this.#pop()
      this.#now = Math.max(this.#now, next.at)
      next.fire()
    }
    this.#now = Math.max(this.#now, end)
  }
}

const before = (a: Timer, b: Timer) => a.at < b.at || (a.at === b.at && a.seq < b.seq)

/** One turn of the event loop: every microtask queued before it has run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve))
