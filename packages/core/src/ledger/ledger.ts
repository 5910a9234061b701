import type {
  DeliveryOutcome,
  DeliveryRecord,
  LedgerContext,
  LedgerEnvelope,
  RecordRunOptions,
  VerifiedDelivery,
} from '../claims/record.js'
import { deliverRecorded, handOff } from './deliver.js'
import type { ResourceMark, StoredLedgerEntry } from './entry.js'
import type { DeliveryLedgerOptions } from './options.js'
import { type RecentAnswer, RecentAnswers, type RecentDropped } from './recent.js'
import type { ReplayOptions, ReplayReport } from './replay.js'
import { runReplayJob } from './rerun.js'
import type { ReplayRunner } from './runner.js'
import { LedgerRuns } from './runs.js'
import type { LedgerFilter, LedgerPage, LedgerPurged, LedgerStore } from './store.js'

// The delivery ledger: one entry per verified delivery, moved on by the pure functions of
// `machine.ts` and written by compare-and-set (`runs.ts`). The webhook handler asks it whether
// to run a delivery, and tells it how the handlers ended; a replay (`replay.ts`, loaded when
// first called) runs recorded deliveries again. Catch-up stands above the ledger (`catch-up/`:
// it reads the API and feeds the ledger through `feed()`), as the delivery page does (`page/`).

/** Accounts read again at once for old bodies (`reread`); past it, an old body is only refused. */
const MAX_REREADS = 4

/** How long one account's reading may take, in ms (its catch-up's `timeoutMs`). */
const REREAD_TIMEOUT_MS = 10_000

/** What `reread` reads of a catch-up's report: the differences run, the problems met. */
export interface RereadReport {
  ran: number
  problems: readonly unknown[]
}

/** The ledger as catch-up feeds it (`DeliveryLedger.feed`). */
export interface LedgerFeed extends DeliveryRecord {
  /** The ledger's clock, ms since the epoch. */
  now(): number
  /** What was last applied to a resource (an Event), by its id. */
  mark(resourceId: string): Promise<ResourceMark | undefined>
  /** Fields left out of a resource's digest (the ledger's `volatileFields`). */
  readonly volatile: ReadonlySet<string> | undefined
  /** The retention horizon: `purge` drops the marks of Events that ended before it. */
  horizon(): number
}

/** The ledger of one app's deliveries; made by `createDeliveryLedger` (`catch-up/ledger.ts`). */
export class DeliveryLedger implements DeliveryRecord {
  readonly #runs: LedgerRuns
  readonly #recent = new RecentAnswers()
  /** The accounts being read again for an old body (`reread`), each with its reading. */
  readonly #rereads = new Map<string, Promise<number | undefined>>()

  constructor(options: DeliveryLedgerOptions) {
    this.#runs = new LedgerRuns(options)
  }

  /** Where the entries are kept. */
  get store(): LedgerStore {
    return this.#runs.store
  }

  /** How long an entry is kept (`retention.entryMs`): how old a delivery it can still tell. */
  get horizonMs(): number {
    return this.#runs.entryMs
  }

  /**
   * A verified delivery through the ledger (the webhook handler's `ledger` option): recorded,
   * run by `run` under the ledger's lease unless it is a duplicate, stale, dead or running
   * elsewhere, its outcome written. Rethrows the handlers' error.
   */
  deliver(
    delivery: VerifiedDelivery,
    run: (context: LedgerContext) => unknown,
    /**
     * `finalAttempt`: a queue's last attempt, a failure makes the entry dead at once
     * (`onDeadLetter`). `replay`: a replay's job (its queue's worker runs it), the entry is run
     * again under the claim a live retry takes, unless it runs now or was handled since the
     * replay saw it. `jobKey` is the claim's alone: the ledger's key is the delivery's.
     */
    options?: RecordRunOptions,
  ): Promise<DeliveryOutcome> {
    if (options?.replay !== undefined)
      return runReplayJob(this.#runs, delivery, run, options.replay, options.finalAttempt)
    const outcome = deliverRecorded(this.#runs, delivery, run, options?.finalAttempt)
    return outcome.then((came) => {
      if (came === 'done') this.#duplicate(delivery)
      return came
    })
  }

  /**
   * A delivery handed to a queue (`put` enqueues its job): recorded `received` first, then put
   * in. `ran`: its first arrival. `done`: recorded before; put in again while it still waits
   * for a worker (its job may have been lost), not once a worker has it.
   */
  async handOff(delivery: VerifiedDelivery, put: () => unknown): Promise<'ran' | 'done'> {
    if (await handOff(this.#runs, delivery, put)) return 'ran'
    this.#duplicate(delivery)
    return 'done'
  }

  #duplicate(delivery: VerifiedDelivery): void {
    this.#recent.note({
      kind: 'duplicate',
      at: this.#runs.now(),
      status: 200,
      id: delivery.key,
      type: delivery.envelope.type,
      ...(delivery.webhookId === undefined ? {} : { webhookId: delivery.webhookId }),
    })
  }

  /**
   * A request the webhook handler refused (never verified, so never recorded), for the
   * delivery page's list of requests answered without a run. The handler tells it; a 409 of a
   * delivery running now is not a refusal.
   */
  noteRefused(error: { status: number; code: string }, webhookId?: string): void {
    if (error.code === 'delivery_in_progress') return
    this.#recent.note({
      kind: 'refused',
      at: this.#runs.now(),
      status: error.status,
      code: error.code,
      ...(webhookId === undefined ? {} : { webhookId }),
    })
  }

  /**
   * Runs recorded deliveries again through `runner` (the webhook handler's `replay()` gives its
   * own parse and dispatch): one by id, or those `target` matches.
   */
  async replay<E extends LedgerEnvelope>(
    target: string | LedgerFilter,
    options: ReplayOptions | undefined,
    runner: ReplayRunner<E>,
  ): Promise<ReplayReport> {
    const { replayDeliveries } = await import('./replay.js')
    return replayDeliveries(this.#runs, runner, target, options)
  }

  /**
   * The ledger as a sweep that feeds it deliveries of its own sees it (catch-up): the record
   * (less the page's list of duplicate requests: a difference found twice is no request), the
   * clock, the marks of resources, the fields left out of their digests, the retention horizon.
   */
  feed(): LedgerFeed {
    const runs = this.#runs
    return {
      deliver: (delivery, run) => deliverRecorded(runs, delivery, run),
      handOff: async (delivery, put) => ((await handOff(runs, delivery, put)) ? 'ran' : 'done'),
      now: runs.now,
      mark: (id) => runs.store.mark(id),
      volatile: runs.volatile,
      horizon: () => runs.now() - runs.entryMs,
    }
  }

  /**
   * Reads an account's Events again for a body older than the handler's `maxAgeMs`: `catchUp`
   * of that account alone (the handler's, through this ledger), so what differs from what was
   * applied runs as the API lists it now. One reading per account at a time (old bodies of one
   * account arriving together share it), at most 4 accounts at once. Resolves to the
   * differences run, or `undefined` when none was read (too many readings under way, no
   * client for the account, a problem listing it).
   */
  reread(
    account: string,
    catchUp: (options: { keys: string[]; timeoutMs: number }) => Promise<RereadReport>,
  ): Promise<number | undefined> {
    let reading = this.#rereads.get(account)
    if (reading !== undefined) return reading
    if (this.#rereads.size >= MAX_REREADS) return Promise.resolve(undefined)
    reading = catchUp({ keys: [account], timeoutMs: REREAD_TIMEOUT_MS })
      .then((report) => (report.problems.length === 0 ? report.ran : undefined))
      .catch(() => undefined)
      .finally(() => this.#rereads.delete(account))
    this.#rereads.set(account, reading)
    return reading
  }

  /**
   * The requests this process answered without a run, newest first: refusals (never verified,
   * so never recorded) and duplicates. Kept in memory, the last 100 of each kind.
   */
  recent(): RecentAnswer[] {
    return this.#recent.list()
  }

  /** How many answers of each kind `recent()` no longer holds (the oldest go first). */
  recentDropped(): RecentDropped {
    return this.#recent.dropped()
  }

  /** An entry by its ledger id (the delivery's dedupe key), with its status. */
  get(id: string): Promise<StoredLedgerEntry | undefined> {
    return this.#runs.store.get(id)
  }

  /** Entries matching `filter`, newest first, one page at a time (`next` is the cursor). */
  list(filter?: LedgerFilter): Promise<LedgerPage> {
    return this.#runs.store.list(filter)
  }

  /**
   * Drops what retention says is over: bodies past `retention.bodyMs`, entries past
   * `retention.entryMs`, and the marks of Events nothing was applied to for as long that ended
   * as long ago (`markHorizonOf`); with `account`, every body of that account at once (a
   * disconnect, a request to erase). Run it on a schedule.
   */
  purge(options: { account?: string } = {}): Promise<LedgerPurged> {
    const now = this.#runs.now()
    return this.#runs.store.purge({
      bodiesBefore: now,
      entriesBefore: now - this.#runs.entryMs,
      marksBefore: now - this.#runs.entryMs,
      ...(options.account === undefined ? {} : { account: options.account }),
    })
  }
}
