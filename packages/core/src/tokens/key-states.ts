import { INITIAL_TOKEN_STATE, type TokenState } from './machine.js'

/** What this process remembers of one key. */
export interface KeyState {
  state: TokenState
  /** Fingerprint of the record last seen. */
  seen?: string
  /** The last transient failure, thrown while refreshing is on hold. */
  lastError?: unknown
  /**
   * When the newest connection this process read for the key was made (its generation's
   * stamp): a record of an older connection was rolled back, and is refused.
   */
  connected?: number
}

/**
 * Per-key state, bounded: two generations of at most `max` keys each. A key read from the
 * older generation moves to the newer; when the newer fills up, the older is dropped whole.
 * O(1) per access, at most `2 * max` keys, and a key in use is never the one forgotten.
 * Forgetting is safe: the state is rebuilt from the stored record on the next access.
 */
export class KeyStates {
  #current = new Map<string, KeyState>()
  #previous = new Map<string, KeyState>()
  constructor(readonly max: number) {}

  get size(): number {
    return this.#current.size + this.#previous.size
  }

  get(key: string): KeyState {
    let entry = this.#current.get(key)
    if (entry !== undefined) return entry
    entry = this.#previous.get(key)
    if (entry !== undefined) this.#previous.delete(key)
    else entry = { state: INITIAL_TOKEN_STATE }
    if (this.#current.size >= this.max) {
      this.#previous = this.#current
      this.#current = new Map()
    }
    this.#current.set(key, entry)
    return entry
  }

  delete(key: string): void {
    this.#current.delete(key)
    this.#previous.delete(key)
  }

  peek(key: string): KeyState | undefined {
    return this.#current.get(key) ?? this.#previous.get(key)
  }
}
