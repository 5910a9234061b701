import { ConfigError } from '../errors/errors.js'
import { CredentialError } from '../errors/store.js'
import { isSealedCredential } from './envelope.js'
import type { CredentialCipher } from './types.js'

/** Checks a store's `cipher` option: absent, or what `createCredentialCipher` made. */
export function cipherOption(who: string, cipher: unknown): CredentialCipher | undefined {
  if (cipher === undefined) return undefined
  const c = cipher as Partial<CredentialCipher>
  if (
    typeof c?.seal !== 'function' ||
    typeof c.open !== 'function' ||
    typeof c.readPlaintext !== 'function'
  ) {
    throw new ConfigError(
      `${who}: cipher must come from createCredentialCipher({ keys, current }).`,
    )
  }
  return cipher as CredentialCipher
}

/**
 * How a store keeps whole records with an optional cipher: as JSON without one, sealed with
 * one (bound to the store's kind and the record's key). Reads take either, so turning the
 * cipher on needs no migration: a record stored as JSON is read (unless the cipher refuses
 * plaintext) and sealed on its next write or by `reencrypt()`.
 */
export class RecordSealer<T> {
  readonly #cipher: CredentialCipher | undefined
  readonly #kind: string

  /** `kind` names the store in the sealed context (`token`, `subscription`). */
  constructor(cipher: CredentialCipher | undefined, kind: string) {
    this.#cipher = cipher
    this.#kind = kind
  }

  /** Whether records are written sealed. */
  get sealing(): boolean {
    return this.#cipher !== undefined
  }

  /** What to store for a record: its JSON, or its JSON sealed. */
  async write(key: string, record: T): Promise<string> {
    const json = JSON.stringify(record)
    return this.#cipher === undefined ? json : this.#cipher.seal(json, [this.#kind, key])
  }

  /**
   * The record from what the store holds: a sealed string, JSON text, or JSON a driver already
   * parsed (a jsonb column). A sealed value with no cipher, or with a key id the cipher lacks,
   * throws `CredentialError`; so does plaintext when the cipher refuses it.
   */
  async read(key: string, stored: unknown): Promise<T> {
    if (isSealedCredential(stored)) {
      if (this.#cipher === undefined) {
        const keyId = stored.split('.', 3)[1]
        throw new CredentialError(
          'credential_key_unknown',
          key,
          keyId,
          `it is sealed (key "${keyId}"), and this store was given no cipher: pass { cipher } with that key`,
        )
      }
      return JSON.parse((await this.#cipher.open(stored, [this.#kind, key])).plaintext) as T
    }
    this.#cipher?.readPlaintext([this.#kind, key])
    return (typeof stored === 'string' ? JSON.parse(stored) : stored) as T
  }

  /** True when a stored value is not sealed under the current key: `reencrypt()` rewrites it. */
  stale(stored: unknown): boolean {
    if (this.#cipher === undefined) return false
    return (
      this.#cipher.keyIdOf(typeof stored === 'string' ? stored : '') !== this.#cipher.currentKeyId
    )
  }
}

/** What a `reencrypt()` sweep did. */
export interface ReencryptResult {
  /** Records looked at. */
  scanned: number
  /** Records rewritten under the current key (sealed before under another, or plaintext). */
  rewritten: number
  /**
   * Records left as they are: changed by a write during the sweep (which sealed them under
   * the current key itself), or, for a PostgreSQL token key of over 1 KiB, kept only as its
   * hash (its next write seals it).
   */
  skipped: number
  /** Records that could not be opened (an unknown key id, a tampered record): left as they are. */
  failed: CredentialError[]
}
