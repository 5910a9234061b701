import { ConfigError } from '../errors.js'
import { CredentialError } from '../store-errors.js'
import type {
  StoredSubscription,
  SubscriptionRecord,
  SubscriptionStore,
} from '../subscriptions/store.js'
import type { TokenRecord } from '../tokens/record.js'
import type { TokenStore } from '../tokens/store.js'
import { isSealedCredential } from './cipher.js'
import { cipherOption } from './sealed.js'
import type { CredentialCipher, CredentialContext } from './types.js'

/** A field as stored: sealed, or (from before encryption) plaintext the cipher may refuse. */
async function openField(
  cipher: CredentialCipher,
  value: string,
  context: CredentialContext,
): Promise<string> {
  if (isSealedCredential(value)) return (await cipher.open(value, context)).plaintext
  if (cipher.plaintext === 'refuse') {
    throw new CredentialError(
      'credential_plaintext',
      context[1] ?? '',
      undefined,
      `its ${context[2]} is stored in plaintext, and the cipher refuses plaintext`,
    )
  }
  return value
}

/** Binds the optional methods a store has, so capability checks see what the store offers. */
function passThrough<S extends object, K extends keyof S>(
  store: S,
  names: readonly K[],
): Pick<S, K> {
  const out = {} as Pick<S, K>
  for (const name of names) {
    const method = store[name]
    if (typeof method === 'function') out[name] = method.bind(store) as S[K]
  }
  return out
}

/**
 * A `TokenStore` you wrote yourself, with its access and refresh tokens sealed: each is
 * stored as a sealed string bound to the record's key and the field (the rest of the record
 * is stored as it is, so your schema keeps its meaning). Its optional capabilities
 * (compare-and-set, leases) are kept exactly. Records stored in plaintext before are read,
 * and sealed on their next write.
 *
 * @example
 * ```ts
 * const tokenStore = encryptTokenStore(new MyDatabaseTokenStore(db), cipher)
 * ```
 */
export function encryptTokenStore(store: TokenStore, cipher: CredentialCipher): TokenStore {
  const c = cipherOption('encryptTokenStore', cipher)
  if (c === undefined)
    throw new ConfigError('encryptTokenStore: pass a cipher (createCredentialCipher).')
  const seal = async (key: string, record: TokenRecord): Promise<TokenRecord> => ({
    ...record,
    accessToken: await c.seal(record.accessToken, ['token', key, 'accessToken']),
    refreshToken: await c.seal(record.refreshToken, ['token', key, 'refreshToken']),
  })
  const compareAndSet = store.compareAndSet?.bind(store)
  return {
    ...passThrough(store, ['acquireLease', 'releaseLease']),
    async get(key) {
      const record = await store.get(key)
      if (record === undefined) return undefined
      return {
        ...record,
        accessToken: await openField(c, record.accessToken, ['token', key, 'accessToken']),
        refreshToken: await openField(c, record.refreshToken, ['token', key, 'refreshToken']),
      }
    },
    async set(key, record) {
      await store.set(key, await seal(key, record))
    },
    delete: (key) => store.delete(key),
    ...(compareAndSet === undefined
      ? {}
      : {
          compareAndSet: async (key: string, record: TokenRecord, expected: number | undefined) =>
            compareAndSet(key, await seal(key, record), expected),
        }),
  }
}

/**
 * A `SubscriptionStore` you wrote yourself, with each webhook's signing secret sealed (bound
 * to the account's key and the webhook's id); the rest is stored as it is. Plaintext secrets
 * stored before are read, and sealed on the record's next write.
 */
export function encryptSubscriptionStore(
  store: SubscriptionStore,
  cipher: CredentialCipher,
): SubscriptionStore {
  const c = cipherOption('encryptSubscriptionStore', cipher)
  if (c === undefined)
    throw new ConfigError('encryptSubscriptionStore: pass a cipher (createCredentialCipher).')
  const context = (key: string, id: string): CredentialContext => ['subscription', key, id]
  async function map(
    key: string,
    record: SubscriptionRecord,
    each: (secret: string, context: CredentialContext) => Promise<string>,
  ): Promise<SubscriptionRecord> {
    const webhooks = await Promise.all(
      record.webhooks.map(async (w) => ({
        ...w,
        secret: await each(w.secret, context(key, w.id)),
      })),
    )
    return { ...record, webhooks }
  }
  const open = async (key: string, record: StoredSubscription): Promise<StoredSubscription> => ({
    ...(await map(key, record, (secret, ctx) => openField(c, secret, ctx))),
    version: record.version,
  })
  return {
    async get(key) {
      const record = await store.get(key)
      return record === undefined ? undefined : open(key, record)
    },
    async compareAndSet(key, record, expectedVersion) {
      const sealed = await map(key, record, (secret, ctx) => c.seal(secret, ctx))
      return store.compareAndSet(key, sealed, expectedVersion)
    },
    delete: (key, version) => store.delete(key, version),
    async findByWebhook(webhookId) {
      const found = await store.findByWebhook(webhookId)
      return found === undefined
        ? undefined
        : { key: found.key, record: await open(found.key, found.record) }
    },
    keys: () => store.keys(),
    acquireLease: (key, owner, ttlMs) => store.acquireLease(key, owner, ttlMs),
    releaseLease: (key, owner) => store.releaseLease(key, owner),
  }
}
