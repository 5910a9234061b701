import { newOwnerId } from '../claims/owner.js'
import type {
  DeliveryOutcome,
  LedgerContext,
  ReplayRequest,
  VerifiedDelivery,
} from '../claims/record.js'
import { type Admission, type LeasedLedger, runLeased } from './deliver.js'
import type { LedgerEntry, StoredLedgerEntry } from './entry.js'
import { resourceKeyOf } from './order.js'
import type { OneOutcome } from './runner.js'
import type { LedgerRuns } from './runs.js'
import type { LedgerFilter, LedgerPage } from './store.js'

// One recorded delivery run again, from the body the ledger kept: under the claim a live retry
// takes, in turn with its Event's other deliveries; in this process (a replay, \`replay.ts\`) or
// as a replay's job in a queue's worker (\`runReplayJob\`, what \`DeliveryLedger.deliver\` runs
// for one). The replay over many entries (\`replay.ts\`) is loaded when first called.

export const DONE = 'it is done (replay it with { again: true } to run it again)'

/** What a replay needs of the ledger (`DeliveryLedger`). */
export interface ReplayLedger extends LeasedLedger {
  now(): number
  get(id: string): Promise<StoredLedgerEntry | undefined>
  list(filter?: LedgerFilter): Promise<LedgerPage>
  bodyOf(entry: LedgerEntry): Promise<string | undefined>
  admitReplay(id: string, owner: string, again?: boolean): Promise<Admission | undefined>
}

/** The Event key a replay waits its turn on, when the entry names one. */
const turnOf = (entry: LedgerEntry) =>
  entry.resourceId === undefined ? undefined : resourceKeyOf(entry, entry.resourceId)

/**
 * Runs a recorded delivery again under the same claim a live retry takes: re-checked under it
 * (one that runs now is not run; one done is not run again unless `again`), in turn with its
 * Event's other deliveries. In process, or in a queue's worker for a replay job.
 */
export async function replayRecorded(
  ledger: ReplayLedger,
  entry: LedgerEntry,
  request: ReplayRequest,
  run: (context: LedgerContext) => unknown,
  finalAttempt = false,
): Promise<OneOutcome> {
  const start = async (): Promise<OneOutcome> => {
    const admission = await ledger.admitReplay(entry.id, newOwnerId(), request.again === true)
    if (admission === undefined) return { skipped: 'no such entry' }
    if (admission.action === 'busy') return { skipped: 'it is running now' }
    if (admission.action === 'skip')
      return {
        skipped: admission.status === 'done' ? DONE : admission.status,
      }
    try {
      await runLeased(
        ledger,
        admission.running,
        run,
        { replay: { of: request.of, reason: request.reason } },
        finalAttempt,
      )
      return 'replayed'
    } catch {
      return 'failed'
    }
  }
  // In turn with the Event's other deliveries in this process, as the service's are.
  const turn = turnOf(entry)
  if (turn !== undefined && ledger.inTurnHere(entry.id)) return { skipped: 'it is running now' }
  return turn === undefined
    ? start()
    : ledger.inTurn(turn, entry.id, start, { skipped: 'its Event runs elsewhere now' })
}

/**
 * A replay's job as a queue's worker runs it (`deliver` with `replay`): the entry run again
 * under the claim a live retry takes, unless it runs now or was handled since the replay saw
 * it. `ran` when it ran, `busy` while it runs elsewhere, `done` otherwise; rethrows the
 * handlers' error.
 */
export async function runReplayJob(
  runs: LedgerRuns,
  delivery: VerifiedDelivery,
  run: (context: LedgerContext) => unknown,
  request: ReplayRequest,
  finalAttempt: boolean | undefined,
): Promise<DeliveryOutcome> {
  const entry = await runs.get(delivery.key)
  if (entry === undefined) return 'done'
  let thrown: unknown
  const outcome = await replayRecorded(
    runs,
    entry,
    request,
    async (context) => {
      try {
        await run(context)
      } catch (error) {
        thrown = error
        throw error
      }
    },
    finalAttempt,
  )
  if (outcome === 'failed') throw thrown
  if (outcome === 'replayed') return 'ran'
  if (typeof outcome === 'object' && outcome.skipped === 'it is running now') return 'busy'
  return 'done'
}
