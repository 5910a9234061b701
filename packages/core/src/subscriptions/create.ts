import type { SchedulingClient } from '../api/client.js'
import type { ApiWebhook, CreatedWebhook } from '../api/webhooks.js'
import { isSchedulingError } from '../errors/errors.js'
import { works } from './plan.js'
import type { StoredSubscription, SubscriptionRecord } from './store.js'

// Creating an account's webhook so that a lost answer never leaves one nobody knows: a create
// that may have landed marks the record uncertain, and the account is listed before the next.

/** What a create needs of the executor. */
export interface Creating {
  readonly url: string
  api(key: string): SchedulingClient
  list(key: string): Promise<Map<string, ApiWebhook>>
  heldElsewhere(key: string, ids: Iterable<string>): Promise<Map<string, string>>
  update(
    key: string,
    change: (record: SubscriptionRecord) => SubscriptionRecord,
  ): Promise<StoredSubscription>
}

/** A failure after which a POST may or may not have landed. */
function mayHaveLanded(error: unknown): boolean {
  return (
    isSchedulingError(error) &&
    (error.code === 'network_error' ||
      error.code === 'timeout' ||
      error.code === 'invalid_response' ||
      (error.code === 'api_error' && error.status >= 500))
  )
}

/** Webhooks at our url that no record of this key lists: created by a lost answer, or another key's. */
function strangers(
  url: string,
  remote: ReadonlyMap<string, ApiWebhook>,
  known: ReadonlySet<string>,
): string[] {
  return [...remote.values()]
    .filter((w) => w.url === url && !known.has(w.id) && works(w, url))
    .map((w) => w.id)
}

/**
 * Cleans up after creates whose answers were lost: lists the account, adopts one webhook at
 * our url that no key of this app holds when the service shows its secret, deletes the
 * others no key holds, leaves those another key holds.
 */
async function recover(
  x: Creating,
  key: string,
  known: ReadonlySet<string>,
  actions: string[],
): Promise<CreatedWebhook | undefined> {
  const remote = await x.list(key)
  const found = strangers(x.url, remote, known)
  const held = await x.heldElsewhere(key, found)
  let adopted: CreatedWebhook | undefined
  for (const id of found) {
    if (held.has(id)) continue
    const webhook = remote.get(id)!
    if (adopted === undefined && typeof webhook.secret === 'string') {
      adopted = webhook as CreatedWebhook
      actions.push(`adopted ${id} (its create's answer was lost)`)
    } else {
      await x.api(key).webhooks.delete(id)
      actions.push(`deleted ${id} (a create whose answer was lost)`)
    }
  }
  return adopted
}

/**
 * Creates a webhook at our url. With `listFirst` (the record is marked uncertain), the
 * account is cleaned up first. A create that fails in a way that may have landed marks the
 * record uncertain before anything else, then cleans up and creates once more: a second
 * such failure leaves the mark, so the next `ensure` lists again before creating.
 */
export async function createWebhook(
  x: Creating,
  key: string,
  record: SubscriptionRecord,
  actions: string[],
): Promise<CreatedWebhook> {
  const known = new Set(record.webhooks.map((w) => w.id))
  if (record.uncertain === true) {
    const adopted = await recover(x, key, known, actions)
    if (adopted !== undefined) return adopted
  }
  try {
    return await x.api(key).webhooks.create({ url: x.url })
  } catch (error) {
    if (!mayHaveLanded(error)) throw error
    if (record.uncertain !== true) await x.update(key, (r) => ({ ...r, uncertain: true }))
    return (
      (await recover(x, key, known, actions)) ?? (await x.api(key).webhooks.create({ url: x.url }))
    )
  }
}
