import { isSealedCredential } from './envelope.js'
import type { CredentialCipher, CredentialContext } from './types.js'

// Shared by the store wrappers (`encryptTokenStore`, `encryptSubscriptionStore`), which live
// beside the store types they wrap.

/**
 * A record's fields as stored: each sealed one opened for its context; a record with any field
 * in plaintext is refused unless the cipher is migrating (counted once per record then).
 */
export async function openFields(
  cipher: CredentialCipher,
  values: ReadonlyArray<readonly [string, CredentialContext]>,
  record: CredentialContext,
  what: string,
): Promise<string[]> {
  if (values.some(([value]) => !isSealedCredential(value))) cipher.readPlaintext(record, what)
  return Promise.all(
    values.map(async ([value, context]) =>
      isSealedCredential(value) ? (await cipher.open(value, context)).plaintext : value,
    ),
  )
}

/** Binds the optional methods a store has, so capability checks see what the store offers. */
export function passThrough<S extends object, K extends keyof S>(
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
