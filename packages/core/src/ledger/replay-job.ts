import type {
  DeliveryOutcome,
  LedgerContext,
  ReplayRequest,
  VerifiedDelivery,
} from '../claims/record.js'
import { replayRecorded } from './replay.js'
import type { LedgerRuns } from './runs.js'

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
