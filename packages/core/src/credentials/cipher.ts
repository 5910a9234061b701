import { defaultAesGcm } from '../crypto/default.js'
import type { AesGcmProvider } from '../crypto/provider.js'
import { CredentialError } from '../errors/store.js'
import { emit, type Logger } from '../log.js'
import { contextCheck, contextText, keyIdOf, PREFIX, readEnvelope } from './envelope.js'
import { type CipherSettings, cipherSettings } from './keys.js'
import type {
  CredentialCipher,
  CredentialCipherOptions,
  CredentialContext,
  OpenedCredential,
} from './types.js'

/**
 * Sealed values opened lately, by context and value: reading a record that has not changed
 * since costs a lookup, not a decryption. Any other value (another context, one byte changed)
 * misses and is opened and authenticated in full.
 */
const OPENED_CACHE = 512

/** The key a context names, for error messages: its second part (`[kind, key, ...]`). */
const storeKeyOf = (context: CredentialContext) => context[1] ?? context[0] ?? ''

/** Whether this process has told of its plaintext reads (once per process, whatever the cipher). */
let plaintextTold = false

/**
 * Counts plaintext reads under `plaintext: 'accept'` and logs once per process, a second after
 * the first (so a sweep's reads are counted together), how many there were and how to finish
 * the migration.
 */
class PlaintextLog {
  count = 0
  readonly #logger: Logger

  constructor(logger: Logger) {
    this.#logger = logger
  }

  read(): void {
    this.count++
    if (plaintextTold) return
    plaintextTold = true
    const timer = setTimeout(() => {
      emit(
        this.#logger,
        'warn',
        `scheduling-kit: ${this.count} credential record(s) were read in plaintext (createCredentialCipher's plaintext: 'accept', a migration mode). Finish the migration: run reencrypt() on every token and subscription store, check that its failed list is empty, then remove the plaintext option so that a planted plaintext record is refused. (told once per process)`,
      )
    }, 1000) as { unref?: () => void }
    timer.unref?.()
  }
}

/** AES-256-GCM over the envelope (envelope.ts), with the app's keys (keys.ts). */
class Cipher implements CredentialCipher {
  readonly currentKeyId: string
  readonly keyIds: readonly string[]
  readonly plaintext: 'accept' | 'refuse'
  readonly #aes: AesGcmProvider
  readonly #raw: Map<string, Uint8Array>
  readonly #known: ReadonlySet<string>
  readonly #plaintextLog: PlaintextLog
  /** Imported on first use, each once; the raw bytes are not kept past that. */
  readonly #imported = new Map<string, Promise<unknown>>()
  readonly #opened = new Map<string, OpenedCredential>()

  constructor(aes: AesGcmProvider, settings: CipherSettings) {
    this.#aes = aes
    this.#raw = settings.raw
    this.currentKeyId = settings.current
    this.keyIds = settings.keyIds
    this.#known = new Set(settings.keyIds)
    this.plaintext = settings.plaintext
    this.#plaintextLog = new PlaintextLog(settings.logger)
  }

  get plaintextReads(): number {
    return this.#plaintextLog.count
  }

  readPlaintext(context: CredentialContext, what = 'record'): void {
    if (this.plaintext === 'refuse') {
      throw new CredentialError(
        'credential_plaintext',
        storeKeyOf(context),
        undefined,
        `its ${what} is stored in plaintext, which this cipher refuses (a record planted by anyone who can write to the store would be used as the account's). If records predate encryption, pass plaintext: 'accept' until every store's reencrypt() has run`,
      )
    }
    this.#plaintextLog.read()
  }

  async seal(text: string, context: CredentialContext): Promise<string> {
    const ctx = contextText(context)
    const header = `${PREFIX}${this.currentKeyId}.${contextCheck(ctx)}.`
    const iv = this.#aes.randomIv()
    const key = await this.#keyFor(this.currentKeyId)!
    const [ciphertext, tag] = await this.#aes.encrypt(key, iv, header + ctx, text)
    return `${header}${iv}.${ciphertext}.${tag}`
  }

  async open(sealed: string, context: CredentialContext): Promise<OpenedCredential> {
    const ctx = contextText(context)
    // JSON escapes control characters: the NUL cannot occur in `ctx`, so keys are unambiguous.
    const cacheKey = typeof sealed === 'string' ? `${ctx}\u0000${sealed}` : ''
    const hit = this.#opened.get(cacheKey)
    if (hit !== undefined) return hit
    const envelope = readEnvelope(sealed, ctx, this.#known)
    if ('code' in envelope)
      throw new CredentialError(envelope.code, storeKeyOf(context), envelope.keyId, envelope.why)
    const { keyId, check, iv, ciphertext, tag } = envelope
    const header = `${PREFIX}${keyId}.${check}.`
    const key = await this.#keyFor(keyId)!
    const text = await this.#aes.decrypt(key, iv, header + ctx, ciphertext, tag)
    if (text === undefined) {
      throw new CredentialError(
        'credential_tampered',
        storeKeyOf(context),
        keyId,
        `it does not authenticate under key "${keyId}": it was changed, or "${keyId}" is not the key that sealed it`,
      )
    }
    const result = Object.freeze({ plaintext: text, keyId })
    if (this.#opened.size >= OPENED_CACHE) this.#opened.delete(this.#opened.keys().next().value!)
    this.#opened.set(cacheKey, result)
    return result
  }

  keyIdOf(value: unknown): string | undefined {
    return keyIdOf(value)
  }

  #keyFor(id: string): Promise<unknown> | undefined {
    let key = this.#imported.get(id)
    if (key === undefined) {
      const bytes = this.#raw.get(id)
      if (bytes === undefined) return undefined
      key = this.#aes.importKey(bytes)
      this.#imported.set(id, key)
      this.#raw.delete(id)
    }
    return key
  }
}

/**
 * A cipher for credentials at rest. Give it to every store (`cipher` option) of every
 * instance: AES-256-GCM, a versioned envelope naming the key id, a random IV per write, and
 * the record's store key bound as additional data.
 *
 * Rotation: add the new key to `keys` everywhere first; then make it `current`; then run the
 * stores' `reencrypt()`; then drop the old key.
 *
 * @example
 * ```ts
 * const cipher = createCredentialCipher({
 *   keys: { '2026-11': process.env.CREDENTIAL_KEY! },
 *   current: '2026-11',
 * })
 * const tokenStore = new RedisTokenStore({ client: redis, cipher })
 * ```
 */
export function createCredentialCipher(options: CredentialCipherOptions): CredentialCipher {
  return cipherWith(defaultAesGcm, options)
}

/** @internal The cipher on a given AES-GCM implementation (tests seal on one, open on the other). */
export function cipherWith(
  aes: AesGcmProvider,
  options: CredentialCipherOptions,
): CredentialCipher {
  return new Cipher(aes, cipherSettings(options))
}
