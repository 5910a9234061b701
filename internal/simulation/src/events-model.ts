// Each account's Events as the service model lists them (`GET /v1/events?period=`): an active
// account has one Event ahead, which an outage can see rescheduled (its delivery lost); every
// account has history, long past, that a listing of the past reaches on its first page (its
// newest Event started well before any catch-up's `since`). Events are made from the account's
// key: nothing is kept for an account until its Event ahead changes.

export interface ModelEvent {
  id: string
  state: 'confirmed'
  start_at: string
  end_at: string
}

const HALF_HOUR = 1_800_000
const DAY_MS = 86_400_000

export class EventsModel {
  /** Each rescheduled Event's start, by account. */
  readonly #moved = new Map<string, number>()
  /** Told each account a list is answered for (the run's tally). */
  onList: ((account: string) => void) | undefined

  constructor(
    readonly start: number,
    readonly active: (key: string) => boolean,
    readonly draw: (key: string) => number,
  ) {}

  /** When the account's Event ahead starts now. */
  startOf(account: string): number {
    return (
      this.#moved.get(account) ??
      this.start + 3 * DAY_MS + Math.floor(this.draw(account) * 5 * DAY_MS)
    )
  }

  /** The account's Event ahead moved to `at` (a change whose delivery the outage lost). */
  reschedule(account: string, at: number): void {
    this.#moved.set(account, at)
  }

  /** The Events the account's `period` lists now: newest first for the past. */
  list(account: string, period: string | null): ModelEvent[] {
    this.onList?.(account)
    if (period === 'upcoming')
      return this.active(account) ? [event(`event_${account}`, this.startOf(account))] : []
    const old = this.start - 40 * DAY_MS
    return [event(`history_${account}`, old)]
  }
}

const event = (id: string, start: number): ModelEvent => ({
  id,
  state: 'confirmed',
  start_at: new Date(start).toISOString(),
  end_at: new Date(start + HALF_HOUR).toISOString(),
})
