import type { DeliveryRecord } from '../claims/record.js'
import { ConfigError } from '../errors/errors.js'
import type { WebhookHandler } from '../webhooks/contract.js'
import type { WebhookQueue } from '../webhooks/queue.js'

// What a queue's worker takes from `createScheduling`'s object, so an app names its queue,
// its ledger and its handlers once, for the web process and the worker alike.

/** The part of `createScheduling`'s object a worker reads. */
export interface WorkerScheduling {
  /** Runs the handlers registered on it (`scheduling.webhooks.on(...)`). */
  readonly webhooks: Pick<WebhookHandler, 'dispatch'>
  readonly ledger?: DeliveryRecord | undefined
  readonly queue?: WebhookQueue | undefined
}

/** What a worker's options may give in place of `scheduling`. */
export interface WorkerPartsOptions {
  scheduling?: WorkerScheduling
  handler?: Pick<WebhookHandler, 'dispatch'>
  ledger?: DeliveryRecord
}

/** A worker's handler and ledger, and its queue's settings when they came from `scheduling`. */
export interface WorkerParts<S> {
  handler: Pick<WebhookHandler, 'dispatch'>
  ledger: DeliveryRecord | undefined
  settings: S | undefined
}

/**
 * Resolves a worker's parts: from its own options, or from `scheduling` (the handler may still
 * be given, e.g. an adapter middleware's `.handler`). With `scheduling`, what it holds (the
 * ledger, and the queue's `settingNames`) may not be named again in the options: one place each.
 */
export function workerParts<S>(
  who: string,
  options: WorkerPartsOptions & object,
  settingNames: readonly string[],
  settingsOf: (queue: WebhookQueue) => S | undefined,
  queueMaker: string,
): WorkerParts<S> {
  const { scheduling } = options
  if (scheduling === undefined) {
    if (typeof options.handler?.dispatch !== 'function')
      throw new ConfigError(
        `${who}: pass { scheduling } (createScheduling's object), or handler with dispatch() (the webhook handler, or middleware.handler).`,
      )
    return { handler: options.handler, ledger: options.ledger, settings: undefined }
  }
  if (typeof scheduling?.webhooks?.dispatch !== 'function')
    throw new ConfigError(`${who}: scheduling is createScheduling's object.`)
  for (const name of ['ledger', ...settingNames])
    if ((options as Record<string, unknown>)[name] !== undefined)
      throw new ConfigError(
        `${who}: ${name} comes from scheduling: give it once, to createScheduling or its queue, not here.`,
      )
  if (options.handler !== undefined && typeof options.handler?.dispatch !== 'function')
    throw new ConfigError(
      `${who}: handler must have dispatch(), or leave it out to run scheduling.webhooks.`,
    )
  const { queue } = scheduling
  const settings = queue === undefined ? undefined : settingsOf(queue)
  if (settings === undefined)
    throw new ConfigError(
      queue === undefined
        ? `${who}: scheduling has no queue: createScheduling({ ..., queue: ${queueMaker}(...) }).`
        : `${who}: scheduling's queue is not one ${queueMaker} made.`,
    )
  return {
    handler: options.handler ?? scheduling.webhooks,
    ledger: scheduling.ledger,
    settings,
  }
}
