/**
 * The bytes held at once by bodies still arriving, across the requests of one handler: a
 * request that would take it past its limit is answered 503 `server_busy`, and the service
 * delivers it again later. Bounds the memory that many slow or stalled senders can hold.
 */
export class BodyBudget {
  #held = 0
  constructor(readonly max: number) {}

  /** Bytes held now. */
  get held(): number {
    return this.#held
  }

  /** Takes `bytes` from the budget; `false` (and nothing taken) when they do not fit. */
  take(bytes: number): boolean {
    if (this.#held + bytes > this.max) return false
    this.#held += bytes
    return true
  }

  give(bytes: number): void {
    this.#held -= bytes
  }
}
