import { defaultAesGcm } from '../crypto/default.js'
import type { AesGcmProvider } from '../crypto/provider.js'
import { ConfigError } from '../errors/errors.js'
import { CredentialError } from '../errors/store.js'
import { checkLogger, consoleLogger, emit, type Logger } from '../log.js'
import { fromBase64Url, fromHex, randomToken } from '../platform/bytes.js'
import type {
  CredentialCipher,
  CredentialCipherOptions,
  CredentialContext,
  CredentialKey,
  OpenedCredential,
} from './types.js'

/** The envelope's format tag: the first field of every sealed value. */
const FORMAT = 'skc1'
const PREFIX = `${FORMAT}.`
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/
/**
 * Sealed values opened lately, by context and value: reading a record that has not changed
 * since costs a lookup, not a decryption. Any other value (another context, one byte changed)
 * misses and is opened and authenticated in full.
 */
const OPENED_CACHE = 512
const BASE64URL = /^[A-Za-z0-9_-]*$/
/** Last characters allowed where a base64url text ends in unused bits, by `length % 4`. */
const CANONICAL_LAST: Record<number, RegExp> = { 2: /[AQgw]$/, 3: /[AEIMQUYcgkosw048]$/ }

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

/** True for a value `seal` wrote (by its format tag; it is not opened). */
export function isSealedCredential(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX)
}

/**
 * A new random key for `createCredentialCipher`, base64url: keep it in your secret manager or
 * environment, never beside the data it protects.
 *
 * @example
 * ```ts
 * // node -e "import('@scheduling-kit/core').then(m => console.log(m.generateCredentialKey()))"
 * ```
 */
export function generateCredentialKey(): string {
  return randomToken(32)
}

/** 32 bytes from a key as given; `undefined` when it is not 32 bytes in any accepted form. */
function keyBytes(key: CredentialKey): Uint8Array | undefined {
  if (key instanceof Uint8Array) return key.length === 32 ? key : undefined
  if (typeof key !== 'string') return undefined
  const text = key.trim()
  if (/^[0-9a-fA-F]{64}$/.test(text)) return fromHex(text)
  let end = text.length
  while (end > 0 && text.charCodeAt(end - 1) === 0x3d) end-- // base64's `=` padding
  const bytes = fromBase64Url(text.slice(0, end).replace(/\+/g, '-').replace(/\//g, '_'))
  return bytes?.length === 32 ? bytes : undefined
}

/**
 * A check of the context, kept in the envelope in the clear: FNV-1a over its UTF-16, 8 hex
 * digits. It only tells a record copied from another key (`credential_mismatch`) from one
 * changed in place (`credential_tampered`); the authenticated data is what refuses both.
 */
function contextCheck(context: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < context.length; i++) {
    hash ^= context.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(16).padStart(8, '0')
}

/** The context as one string: JSON keeps every key distinct (lone surrogates escaped). */
const contextText = (context: CredentialContext) => JSON.stringify(context)

/** The key a context names, for error messages: its second part (`[kind, key, ...]`). */
const storeKeyOf = (context: CredentialContext) => context[1] ?? context[0] ?? ''

function canonical(text: string, length?: number): boolean {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return false
  if (length !== undefined && text.length !== length) return false
  return CANONICAL_LAST[text.length % 4]?.test(text) ?? true
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
  const who = 'createCredentialCipher'
  if (typeof options?.keys !== 'object' || options.keys === null) {
    throw new ConfigError(`${who}: pass { keys: { <id>: <32-byte key> }, current: <id> }.`)
  }
  const raw = new Map<string, Uint8Array>()
  for (const [id, key] of Object.entries(options.keys)) {
    if (!KEY_ID.test(id)) {
      throw new ConfigError(
        `${who}: key id ${JSON.stringify(id.slice(0, 40))} must be 1-32 letters, digits, _ or -.`,
      )
    }
    const bytes = keyBytes(key)
    if (bytes === undefined) {
      throw new ConfigError(
        `${who}: key "${id}" must be 32 random bytes, as base64 (openssl rand -base64 32), base64url, 64 hex digits or a Uint8Array.`,
      )
    }
    raw.set(id, bytes)
  }
  const current = options.current
  if (typeof current !== 'string' || !raw.has(current)) {
    throw new ConfigError(
      `${who}: current must name one of the keys (${[...raw.keys()].join(', ') || 'none given'}).`,
    )
  }
  const plaintext = options.plaintext ?? 'refuse'
  if (plaintext !== 'accept' && plaintext !== 'refuse') {
    throw new ConfigError(`${who}: plaintext must be 'accept' or 'refuse'.`)
  }
  const plaintextLog = new PlaintextLog(checkLogger(options.logger, who) ?? consoleLogger)
  // Imported on first use, each once; the raw bytes are not kept past that.
  const imported = new Map<string, Promise<unknown>>()
  const keyFor = (id: string): Promise<unknown> | undefined => {
    let key = imported.get(id)
    if (key === undefined) {
      const bytes = raw.get(id)
      if (bytes === undefined) return undefined
      key = aes.importKey(bytes)
      imported.set(id, key)
      raw.delete(id)
    }
    return key
  }
  const keyIds = [current, ...[...raw.keys()].filter((id) => id !== current)]
  const known = new Set(keyIds)
  const opened = new Map<string, OpenedCredential>()

  function fail(
    code: CredentialError['code'],
    context: CredentialContext,
    keyId: string | undefined,
    why: string,
  ): never {
    throw new CredentialError(code, storeKeyOf(context), keyId, why)
  }

  return {
    currentKeyId: current,
    keyIds,
    plaintext,
    readPlaintext(context, what = 'record') {
      if (plaintext === 'refuse') {
        fail(
          'credential_plaintext',
          context,
          undefined,
          `its ${what} is stored in plaintext, which this cipher refuses (a record planted by anyone who can write to the store would be used as the account's). If records predate encryption, pass plaintext: 'accept' until every store's reencrypt() has run`,
        )
      }
      plaintextLog.read()
    },
    get plaintextReads() {
      return plaintextLog.count
    },
    async seal(text, context) {
      const ctx = contextText(context)
      const header = `${PREFIX}${current}.${contextCheck(ctx)}.`
      const iv = aes.randomIv()
      const [ciphertext, tag] = await aes.encrypt(await keyFor(current)!, iv, header + ctx, text)
      return `${header}${iv}.${ciphertext}.${tag}`
    },
    async open(sealed, context) {
      const ctx = contextText(context)
      // JSON escapes control characters: the NUL cannot occur in `ctx`, so keys are unambiguous.
      const cacheKey = typeof sealed === 'string' ? `${ctx}\u0000${sealed}` : ''
      const hit = opened.get(cacheKey)
      if (hit !== undefined) return hit
      const parts = typeof sealed === 'string' ? sealed.split('.') : []
      const keyId = parts[1]
      if (parts[0] !== FORMAT || keyId === undefined || !KEY_ID.test(keyId)) {
        fail(
          'credential_malformed',
          context,
          undefined,
          'it is not a sealed credential (skc1.<key id>...)',
        )
      }
      if (!known.has(keyId)) {
        fail(
          'credential_key_unknown',
          context,
          keyId,
          `this cipher has no key "${keyId}" (it has ${keyIds.join(', ')}): add it to keys`,
        )
      }
      const [, , check, iv, ciphertext, tag] = parts
      if (parts.length !== 6) {
        fail(
          'credential_malformed',
          context,
          keyId,
          `it has ${parts.length} fields, not 6 (a part is missing)`,
        )
      }
      if (
        !/^[0-9a-f]{8}$/.test(check!) ||
        !canonical(iv!, 16) ||
        !canonical(ciphertext!) ||
        !canonical(tag!, 22)
      ) {
        fail(
          'credential_malformed',
          context,
          keyId,
          'a field is not what it must be (context check, IV, ciphertext or tag)',
        )
      }
      if (check !== contextCheck(ctx)) {
        fail(
          'credential_mismatch',
          context,
          keyId,
          'it was sealed for another key: a record copied from another account is never used',
        )
      }
      const header = `${PREFIX}${keyId}.${check}.`
      const text = await aes.decrypt(await keyFor(keyId)!, iv!, header + ctx, ciphertext!, tag!)
      if (text === undefined) {
        fail(
          'credential_tampered',
          context,
          keyId,
          `it does not authenticate under key "${keyId}": it was changed, or "${keyId}" is not the key that sealed it`,
        )
      }
      const result = Object.freeze({ plaintext: text, keyId })
      if (opened.size >= OPENED_CACHE) opened.delete(opened.keys().next().value!)
      opened.set(cacheKey, result)
      return result
    },
    keyIdOf(value) {
      if (!isSealedCredential(value)) return undefined
      const end = value.indexOf('.', PREFIX.length)
      return end < 0 ? undefined : value.slice(PREFIX.length, end)
    },
  }
}
