// The credential cipher's public types.
import type { Logger } from '../log.js'

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
   * What a record stored in plaintext is. `'refuse'` (default) throws `credential_plaintext`:
   * a plaintext record planted in the store by anyone who can write to it is never used as
   * the account's. `'accept'` is a migration mode for turning encryption on over existing
   * records: they are read, sealed on their next write or by `reencrypt()`, and the cipher logs
   * once per process how many it read and how to finish (run every store's `reencrypt()`, then
   * remove the option).
   */
  plaintext?: 'accept' | 'refuse'
  /** Where the migration mode's one warning goes. Default `console`. */
  logger?: Logger
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
  /** Whether a value stored in plaintext is read (`'accept'`, migration mode) or refused. */
  readonly plaintext: 'accept' | 'refuse'
  /**
   * Called by a store for each value it read in plaintext (`context` as for `open`): throws
   * `credential_plaintext` when the cipher refuses plaintext, else counts it for the migration
   * warning.
   */
  readPlaintext(context: CredentialContext, what?: string): void
  /** Plaintext values read so far under `plaintext: 'accept'`. */
  readonly plaintextReads: number
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
