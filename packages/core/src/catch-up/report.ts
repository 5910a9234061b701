import { UNRECOVERABLE } from './difference.js'
import type { CatchUpOutcome, CatchUpReport } from './options.js'

// What a catch-up tells: its report, each delivery's outcome counted in it, and each account's
// problems once its listing is over (read whole, malformed items, capped, differences that
// were running elsewhere).

/** One account's run: what it fed and skipped so far, and its cap. */
export interface AccountRun {
  key: string | undefined
  fed: number
  cap: number
  malformed: number
  /** Differences another process (or a delivery here) was running: not applied by this run. */
  busy: number
  /** Its listing was read whole: the service ignored `period`, or listed the past oldest first. */
  whole: boolean
}

export const newReport = (): CatchUpReport => ({
  accounts: 0,
  resumed: 0,
  listed: 0,
  fed: 0,
  ran: 0,
  queued: 0,
  duplicates: 0,
  busy: 0,
  stale: 0,
  failed: 0,
  malformed: 0,
  capped: 0,
  readWhole: 0,
  problems: [],
  unrecoverable: UNRECOVERABLE,
  unfinished: false,
})

/** One fed delivery's outcome, counted. */
export function countOutcome(
  report: CatchUpReport,
  account: AccountRun,
  outcome: CatchUpOutcome | 'failed',
): void {
  if (outcome === 'ran') report.ran++
  else if (outcome === 'queued') report.queued++
  else if (outcome === 'stale') report.stale++
  else if (outcome === 'done') report.duplicates++
  else if (outcome === 'busy') {
    report.busy++
    account.busy++
  } else report.failed++
}

/** The account's listing is over: what it left undone, told in `problems`. */
export function endAccount(report: CatchUpReport, account: AccountRun): void {
  const { key } = account
  if (account.whole) report.readWhole++
  if (account.malformed > 0)
    report.problems.push({
      key,
      error: `${account.malformed} listed items were no Event (not an object, or no string id): skipped`,
    })
  if (account.fed >= account.cap) {
    report.capped++
    report.problems.push({
      key,
      error: `stopped after ${account.cap} deliveries (maxPerAccount): the next catch-up goes on from there`,
    })
  }
  // Held by another process's lease (one that died holds it until the lease lapses), or by a
  // delivery of the same Event here: not applied by this run, so the account is not caught up.
  if (account.busy > 0)
    report.problems.push({
      key,
      error: `${account.busy} of its differences were running elsewhere (held under a lease): the next catch-up lists the account again`,
    })
}
