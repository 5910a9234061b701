import type { EventsApi } from '../api/events.js'
import type { DeliveryOutcome } from '../claims/record.js'
import type { SweepStore } from '../sweep/store.js'

// What a catch-up is told and what it tells: its options, its report, the accounts it lists.

export interface CatchUpOptions {
  /**
   * The earliest an outage can have begun (ms since the epoch, or a `Date`): Events that ended
   * before it are skipped, and the past Events are listed, newest first, only down to the first
   * that started before it. Default: the ledger's `retention.entryMs` ago (the marks of Events
   * that ended before it are purged).
   */
  since?: number | Date
  /**
   * Where the run keeps its progress, so a run stopped halfway is taken up again: the next call
   * with the same `since` (a time, not the default) passes over the accounts it caught up and
   * lists the rest, and those that failed. A run that caught every account up without a
   * problem is closed; the next call starts afresh. Give the sweep's store
   * (`RedisSweepStore`, `PostgresSweepStore`): each account's last catch-up is one checkpoint.
   */
  progress?: SweepStore
  /** Only these keys. Default: every key with a live subscription (option `subscriptions`). */
  keys?: readonly string[]
  /**
   * Stop starting accounts once the call has run this long, in ms (each of the `concurrency`
   * listings starts one at least): the accounts not reached are left to the next call, which
   * takes the run up when it has `progress` and the same `since` (`runDue()` does, for the
   * run it finds open). The report's `unfinished` says so. Default none: every account.
   */
  budgetMs?: number
  /** Accounts listed at once. Default 4. */
  concurrency?: number
  /**
   * The most deliveries fed for one account in one run (default 1,000): past it, the account
   * stops there with a problem saying so, and the next run goes on from what is applied then.
   * A hostile or mis-pointed API cannot make one run feed without end.
   */
  maxPerAccount?: number
  /** The most pages of one account's listing (default 1,000), and how long it is followed (default 120,000 ms): past either, the account is reported. */
  maxPages?: number
  timeoutMs?: number
  /**
   * Without subscriptions: the client of the one account the app receives for (a personal
   * access token's), its events under no key.
   */
  client?: { events: EventsApi }
}

/** What a catch-up did. */
export interface CatchUpReport {
  /** Accounts listed. */
  accounts: number
  /**
   * Accounts passed over: caught up already by the run this call took up (option `progress`,
   * the same `since` as a run stopped halfway).
   */
  resumed: number
  /** Events the API listed. */
  listed: number
  /** Events whose state the ledger had not applied: fed through the handlers. */
  fed: number
  /**
   * Of those: handled here now; handed to the queue (its worker runs them: not yet run);
   * already handled (a repeat); overtaken by a change applied since the listing (listed again,
   * up to three passes an account); failed.
   */
  ran: number
  queued: number
  duplicates: number
  /**
   * Differences running elsewhere when fed (another process held them under a lease, one that
   * died among them until the lease lapses; or a delivery of the same Event here): not applied
   * by this run. Their accounts are in `problems`, so the next catch-up lists them again.
   */
  busy: number
  stale: number
  failed: number
  /**
   * Items of a listing that are no Event (not an object, no string `id`): skipped, counted,
   * and the account's first one told in `problems`.
   */
  malformed: number
  /** Accounts that stopped at `maxPerAccount` deliveries (in `problems` too). */
  capped: number
  /**
   * Accounts whose Events had to be read whole, each page down to the oldest: the service
   * ignored `period` (its upcoming list held Events long started), or listed past Events in
   * another order than newest first. Correct, but every run costs such an account its whole
   * history.
   */
  readWhole: number
  /**
   * Accounts that could not be listed, or were listed only in part (not connected,
   * reauthorization, the API failing, a list past its bounds, malformed items, the cap).
   */
  problems: { key: string | undefined; error: string }[]
  /** What no catch-up can recover: webhook types the API has no list for. */
  unrecoverable: readonly string[]
  /**
   * The call stopped at its `budgetMs` with accounts not reached: the run stays open for the
   * next call (with `progress`), not closed.
   */
  unfinished: boolean
}

/** What came of one catch-up delivery: the ledger's outcome, or handed to the queue. */
export type CatchUpOutcome = DeliveryOutcome | 'queued'

/** What catch-up needs of the subscriptions: the accounts' keys and clients. */
export interface CatchUpAccounts {
  client?(key: string): { events: EventsApi }
  keys?(): AsyncIterable<string>
}
