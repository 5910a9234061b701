import { newOwnerId } from '../claims/owner.js'
import type { LedgerContext, LedgerEnvelope, ReplayRequest } from '../claims/record.js'
import { ConfigError } from '../errors/errors.js'

// Where a replay or a catch-up delivery runs: where the handlers are. In this process through
// the webhook handler's own parse and dispatch, or handed to its queue, whose worker holds the
// handlers; never marked done where no handler can run.

/** How one replayed entry ended. */
export type OneOutcome = 'replayed' | 'queued' | 'failed' | { skipped: string }

/** A queue, as the ledger hands a replay or a catch-up to it (a `WebhookQueue` is one). */
export interface LedgerQueue<E> {
  enqueue(
    event: E,
    context: {
      webhookId: string | undefined
      secretIndex: number
      headers: Record<string, string>
      account?: string
      replay?: { of: string; reason: string }
      catchUp?: true
    },
    delivery: { key: string; replay?: ReplayRequest & { nonce: string }; listedAt?: number },
  ): unknown
}

/**
 * How a replay runs an entry's handlers: the webhook handler's own parse and dispatch, or,
 * when the handler has a queue, the queue, so the worker that holds the handlers runs it.
 */
export interface ReplayRunner<E extends LedgerEnvelope = LedgerEnvelope> {
  parse(body: string): E
  dispatch(
    envelope: E,
    context: LedgerContext & { webhookId: string | undefined; account: string | undefined },
  ): unknown
  /** `false` when the handler has no handler to run (nor a catch-all). */
  handlers?: boolean
  /** The handler's queue: replays and catch-ups are handed to it, its worker runs them. */
  queue?: LedgerQueue<E> | undefined
}

/** What a delivery handed to the queue is: a replay's, or a catch-up's. */
export type QueuedKind = { replay: ReplayRequest } | { catchUp: { listedAt: number } }

/**
 * Hands a replay or a catch-up delivery to the runner's queue (its job id differs from the
 * live delivery's for a replay: a nonce of its own). `undefined` when the runner has no queue;
 * a `ConfigError` when it has neither a queue nor a handler: nothing would run, and nothing may
 * be marked done.
 */
export function queueOf<E extends LedgerEnvelope>(
  runner: ReplayRunner<E>,
  what: 'replay()' | 'catchUp()',
):
  | ((
      event: E,
      delivery: {
        key: string
        webhookId: string | undefined
        account: string | undefined
      } & QueuedKind,
    ) => Promise<void>)
  | undefined {
  const { queue } = runner
  if (queue === undefined) {
    if (runner.handlers === false)
      throw new ConfigError(
        `${what} runs the handlers where they are, and this webhook handler has none and no queue: call it on the handler that has them (the worker's), or give this one the queue option so its worker runs them.`,
      )
    return undefined
  }
  return async (event, delivery) => {
    const replay = 'replay' in delivery ? delivery.replay : undefined
    await queue.enqueue(
      event,
      {
        webhookId: delivery.webhookId,
        secretIndex: 0,
        headers: {},
        ...(delivery.account === undefined ? {} : { account: delivery.account }),
        ...(replay === undefined
          ? { catchUp: true as const }
          : { replay: { of: replay.of, reason: replay.reason } }),
      },
      {
        key: delivery.key,
        ...(replay === undefined
          ? { listedAt: (delivery as { catchUp: { listedAt: number } }).catchUp.listedAt }
          : { replay: { ...replay, nonce: newOwnerId() } }),
      },
    )
  }
}
