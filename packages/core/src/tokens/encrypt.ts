import { openFields, passThrough } from '../credentials/fields.js'
import { cipherOption } from '../credentials/sealed.js'
import type { CredentialCipher } from '../credentials/types.js'
import { ConfigError } from '../errors/errors.js'
import type { TokenRecord } from './record.js'
import type { TokenStore } from './store.js'

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
    ...passThrough(store, ['acquireLease', 'releaseLease', 'compareAndDelete']),
    async get(key) {
      const record = await store.get(key)
      if (record === undefined) return undefined
      const [accessToken, refreshToken] = await openFields(
        c,
        [
          [record.accessToken, ['token', key, 'accessToken']],
          [record.refreshToken, ['token', key, 'refreshToken']],
        ],
        ['token', key],
        'access or refresh token',
      )
      return { ...record, accessToken: accessToken!, refreshToken: refreshToken! }
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
