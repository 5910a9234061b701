import type { DeliveryRecord, LedgerEnvelope } from '../claims/record.js'
import { ConfigError } from '../errors/errors.js'
import type { DeliveryLedger } from '../ledger/ledger.js'
import { queueOf, type ReplayRunner } from '../ledger/runner.js'
import { type CatchUpSource, catchUp } from './catch-up.js'
import type { CatchUpAccounts, CatchUpOptions, CatchUpReport } from './options.js'

// Catch-up as the webhook handler's `catchUp()` runs it, with its own parse, dispatch and
// queue (`runner`) over the ledger's feed. The handler loads this module when `catchUp()` is
// first called: a process that never catches up does not load it, and a bundler that splits
// at dynamic imports puts it in a chunk of its own.

/**
 * Lists accounts' events from the API and feeds each state the ledger has not applied
 * through `runner`.
 */
export function catchUpWith<E extends LedgerEnvelope>(
  ledger: DeliveryLedger,
  runner: ReplayRunner<E>,
  subscriptions: CatchUpAccounts | undefined,
  options: CatchUpOptions = {},
): Promise<CatchUpReport> {
  const feed = ledger.feed()
  const source = handlerSource(feed, runner as ReplayRunner<LedgerEnvelope>, subscriptions, options)
  return catchUp(feed, source, options)
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
