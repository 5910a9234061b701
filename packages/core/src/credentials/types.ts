// The credential cipher's public types.

/**
 * A key given to `createCredentialCipher`: 32 random bytes, as base64 or base64url (what
 * `openssl rand -base64 32` prints), as 64 hex digits, or as the bytes themselves.
 */
export type CredentialKey = string | Uint8Array

export interface CredentialCipherOptions {
  /**
   * Every key a record may have been sealed with, by id (letters, digits, `_`, `-`; at most
   * 32). Keep an old key here until `reencrypt()` has moved every record off it.
   */
  keys: Record<string, CredentialKey>
  /** The id of the key new records are sealed with. */
  current: string
  /**
   * What a record stored before encryption was turned on is: `'accept'` (default) reads it, and
   * its next write (or `reencrypt()`) seals it; `'refuse'` throws `credential_plaintext`, once
   * every record is sealed, so a plaintext record planted in the store is never used.
   */
  plaintext?: 'accept' | 'refuse'
}

/**
 * What a stored value is bound to: the store's kind and the record's key, and for a sealed
 * field its name. A value sealed for one context does not open in another: a record copied
 * onto another account's key is refused instead of connecting the wrong account.
 */
export type CredentialContext = readonly string[]

/** What `open` read: the plaintext and the key that sealed it. */
export interface OpenedCredential {
  plaintext: string
  keyId: string
}

/**
 * Seals credentials at rest with AES-256-GCM (node:crypto on Node and Bun, Web Crypto
 * elsewhere; the same envelope on every runtime). Stores take it as their `cipher` option.
 */
export interface CredentialCipher {
  /** The id of the key new values are sealed with. */
  readonly currentKeyId: string
  /** Every key id this cipher opens, the current one first. */
  readonly keyIds: readonly string[]
  /** Whether a value stored before encryption is read (`'accept'`) or refused. */
  readonly plaintext: 'accept' | 'refuse'
  /**
   * Seals a plaintext for a context under the current key, with a fresh random IV:
   * `skc1.<key id>.<context check>.<iv>.<ciphertext>.<tag>`.
   */
  seal(plaintext: string, context: CredentialContext): Promise<string>
  /**
   * Opens a sealed value for the context it was sealed for. Throws a `CredentialError`
   * naming the key id and the context's key: `credential_key_unknown`, `credential_mismatch`
   * (sealed for another context), `credential_tampered` (the tag does not authenticate it:
   * changed, or a different key under the same id) or `credential_malformed`.
   */
  open(sealed: string, context: CredentialContext): Promise<OpenedCredential>
  /** The key id a sealed value names; `undefined` when the value is not sealed. */
  keyIdOf(value: string): string | undefined
}
