import { openFields } from '../credentials/fields.js'
import { cipherOption } from '../credentials/sealed.js'
import type { CredentialCipher, CredentialContext } from '../credentials/types.js'
import { ConfigError } from '../errors/errors.js'
import { CredentialError } from '../errors/store.js'
import type { StoredSubscription, SubscriptionRecord, SubscriptionStore } from './store.js'

/**
 * What each sealed secret of a subscription record is bound to beside the account's key and
 * the webhook's id: the record's whole state (`active`, `updatedAt`, and each webhook's id,
 * url, `createdAt`, `removedAt` and `gone`), so a record edited in the store (a retired
 * webhook revived, a removal undone) does not open.
 */
function stateOf(record: SubscriptionRecord): string {
  // Fields added later are bound only when present: records written before still open.
  const state: unknown[] = [
    record.active,
    record.updatedAt,
    record.webhooks.map((w) => {
      const fields: unknown[] = [w.id, w.url, w.createdAt, w.removedAt ?? null, w.gone === true]
      if (w.accountId !== undefined) fields.push(w.accountId)
      return fields
    }),
  ]
  if (record.accountId !== undefined || record.uncertain === true || record.app !== undefined)
    state.push(record.accountId ?? null, record.uncertain === true, record.app ?? null)
  return JSON.stringify(state)
}

/**
 * A `SubscriptionStore` you wrote yourself, with each webhook's signing secret sealed, bound
 * to the account's key, the webhook's id and the record's whole state: the record keeps its
 * shape in your store, but a record whose state was edited there (`active`, `removedAt`,
 * `gone`, a url) is refused (`credential_tampered`) like any tampering, and so is a secret
 * stored in plaintext unless the cipher is in its migration mode (`plaintext: 'accept'`).
 * A record with no webhook has no secret to bind its state to.
 */
export function encryptSubscriptionStore(
  store: SubscriptionStore,
  cipher: CredentialCipher,
): SubscriptionStore {
  const checked = cipherOption('encryptSubscriptionStore', cipher)
  if (checked === undefined)
    throw new ConfigError('encryptSubscriptionStore: pass a cipher (createCredentialCipher).')
  const c: CredentialCipher = checked
  const context = (key: string, id: string, state: string): CredentialContext => [
    'subscription',
    key,
    id,
    state,
  ]
  async function seal(key: string, record: SubscriptionRecord): Promise<SubscriptionRecord> {
    const state = stateOf(record)
    const webhooks = await Promise.all(
      record.webhooks.map(async (w) => ({
        ...w,
        secret: await c.seal(w.secret, context(key, w.id, state)),
      })),
    )
    return { ...record, webhooks }
  }
  async function open(key: string, record: StoredSubscription): Promise<StoredSubscription> {
    const state = stateOf(record)
    const secrets = await openSecrets(
      c,
      record.webhooks.map((w) => [w.secret, context(key, w.id, state)] as const),
      key,
    )
    const webhooks = record.webhooks.map((w, i) => ({ ...w, secret: secrets[i]! }))
    return { ...record, webhooks, version: record.version }
  }
  return {
    async get(key) {
      const record = await store.get(key)
      return record === undefined ? undefined : open(key, record)
    },
    async compareAndSet(key, record, expectedVersion) {
      return store.compareAndSet(key, await seal(key, record), expectedVersion)
    },
    delete: (key, version) => store.delete(key, version),
    async findByWebhook(webhookId) {
      const found = await store.findByWebhook(webhookId)
      return found === undefined
        ? undefined
        : { key: found.key, record: await open(found.key, found.record) }
    },
    keys: (phases) => store.keys(phases),
    acquireLease: (key, owner, ttlMs) => store.acquireLease(key, owner, ttlMs),
    releaseLease: (key, owner) => store.releaseLease(key, owner),
  }
}

/**
 * A subscription's secrets, opened for its record's state: a secret sealed for another state
 * (the record edited in the store) is `credential_tampered`, naming what to check.
 */
async function openSecrets(
  cipher: CredentialCipher,
  values: ReadonlyArray<readonly [string, CredentialContext]>,
  key: string,
): Promise<string[]> {
  try {
    return await openFields(cipher, values, ['subscription', key], "a webhook's secret")
  } catch (error) {
    if (!(error instanceof CredentialError) || error.code !== 'credential_mismatch') throw error
    throw new CredentialError(
      'credential_tampered',
      key,
      error.keyId,
      "it was sealed for another state of the record or another account: the record's active, updatedAt, or a webhook's url, createdAt, removedAt or gone was changed outside this app, or the record was copied from another key. It is not used",
    )
  }
}
