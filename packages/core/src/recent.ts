// A map bounded by recency: past its size, the entry used longest ago goes, one at a time, so a
// working set larger than the bound costs the misses it makes and no more (a map emptied when
// full makes every entry miss at once, then again at every refill).

/** A map of at most `size` entries that drops the one used longest ago to take a new one. */
export class RecentMap<K, V> {
  readonly #size: number
  // A Map keeps insertion order: a hit moves its entry to the end, so the first is the oldest.
  readonly #entries = new Map<K, V>()

  constructor(size: number) {
    if (!Number.isSafeInteger(size) || size < 1)
      throw new RangeError(`RecentMap: size must be a whole number of at least 1, not ${size}.`)
    this.#size = size
  }

  get size(): number {
    return this.#entries.size
  }

  /** The value under `key`, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key)
    if (value === undefined) return undefined
    this.#entries.delete(key)
    this.#entries.set(key, value)
    return value
  }

  /** Sets `key` as the most recently used, dropping the least recently used when full. */
  set(key: K, value: V): void {
    this.#entries.delete(key)
    if (this.#entries.size >= this.#size) {
      const oldest = this.#entries.keys().next()
      if (oldest.done !== true) this.#entries.delete(oldest.value)
    }
    this.#entries.set(key, value)
  }

  delete(key: K): void {
    this.#entries.delete(key)
  }
}
