import type { DeliveryRecord, LedgerEnvelope } from '../claims/record.js'
import { ConfigError } from '../errors/errors.js'
import { type CatchUpSource, catchUp } from './catch-up.js'
import type { CatchUpAccounts, CatchUpOptions, CatchUpReport } from './catch-up-options.js'
import { deliverRecorded, handOff } from './deliver.js'
import { type ReplayOptions, type ReplayReport, replayDeliveries } from './replay.js'
import { queueOf, type ReplayRunner } from './runner.js'
import type { LedgerRuns } from './runs.js'
import type { LedgerFilter } from './store.js'

// A ledger's replay and catch-up, as the webhook handler's `replay()` and `catchUp()` run them
// with its own parse, dispatch and queue (`runner`). The ledger loads this module when one is
// first called: a process that never replays nor catches up does not load it, and a bundler
// that splits at dynamic imports puts it in a chunk of its own.

/** Runs recorded deliveries again through `runner`: one by id, or those `target` matches. */
export function replayWith<E extends LedgerEnvelope>(
  runs: LedgerRuns,
  runner: ReplayRunner<E>,
  target: string | LedgerFilter,
  options: ReplayOptions | undefined,
): Promise<ReplayReport> {
  return replayDeliveries(runs, runner, target, options)
}

/**
 * Lists accounts' events from the API and feeds each state the ledger has not applied
 * through `runner`.
 */
export function catchUpWith<E extends LedgerEnvelope>(
  runs: LedgerRuns,
  runner: ReplayRunner<E>,
  subscriptions: CatchUpAccounts | undefined,
  options: CatchUpOptions = {},
): Promise<CatchUpReport> {
  // The ledger as the record, less the page's list of duplicate requests: a catch-up's
  // difference found twice is no request.
  const source = handlerSource(
    {
      deliver: (delivery, run) => deliverRecorded(runs, delivery, run),
      handOff: async (delivery, put) => ((await handOff(runs, delivery, put)) ? 'ran' : 'done'),
    },
    runner as ReplayRunner<LedgerEnvelope>,
    subscriptions,
    options,
  )
  return catchUp(
    {
      now: runs.now,
      mark: (id) => runs.store.mark(id),
      volatile: runs.volatile,
      horizon: () => runs.now() - runs.entryMs,
    },
    source,
    options,
  )
}

/**
 * The webhook handler's source: each account's events listed with its client from the
 * subscriptions (or `options.client` for one account), each difference fed through the ledger
 * and the handler's registry (`runner`).
 */
export function handlerSource(
  /** The delivery's record: the ledger. */
  ledger: DeliveryRecord,
  runner: ReplayRunner<LedgerEnvelope>,
  subscriptions: CatchUpAccounts | undefined,
  options: CatchUpOptions,
): CatchUpSource {
  const enqueue = queueOf(runner, 'catchUp()')
  if (options.client === undefined && typeof subscriptions?.client !== 'function')
    throw new ConfigError(
      "catchUp() lists events with each account's client: give the handler subscriptions, or catchUp({ client }) for one account.",
    )
  return {
    async *accounts({ keys, client }) {
      if (client !== undefined) {
        yield { key: undefined, events: client.events }
        return
      }
      for await (const key of keys ?? subscriptions!.keys!())
        yield { key, events: subscriptions!.client!(key).events }
    },
    feed: async (delivery, context) => {
      if (enqueue !== undefined) {
        // The worker holds the handlers: recorded `received`, then a job of its own; the
        // worker runs it under the Event's order. The same difference found while its job
        // waits is one delivery (its job id is its key).
        const handed = await ledger.handOff(delivery, () =>
          enqueue(delivery.envelope, {
            key: delivery.key,
            webhookId: undefined,
            account: delivery.account,
            catchUp: { listedAt: delivery.listedAt ?? 0 },
          }),
        )
        return handed === 'ran' ? 'queued' : 'done'
      }
      return ledger.deliver(delivery, (extra) =>
        runner.dispatch(delivery.envelope, {
          webhookId: undefined,
          account: undefined,
          ...context,
          ...extra,
        }),
      )
    },
  }
}
