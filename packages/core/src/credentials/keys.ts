import { ConfigError } from '../errors/errors.js'
import { checkLogger, consoleLogger, type Logger } from '../log.js'
import { fromBase64Url, fromHex, randomToken } from '../platform/bytes.js'
import { KEY_ID } from './envelope.js'
import type { CredentialCipherOptions, CredentialKey } from './types.js'

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

/** A cipher's options, checked: the raw keys by id, the current one first among the ids. */
export interface CipherSettings {
  raw: Map<string, Uint8Array>
  current: string
  keyIds: string[]
  plaintext: 'accept' | 'refuse'
  logger: Logger
}

/** Checks `createCredentialCipher`'s options, each mistake with its own fix. */
export function cipherSettings(options: CredentialCipherOptions): CipherSettings {
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
  const keyIds = [current, ...[...raw.keys()].filter((id) => id !== current)]
  const logger = checkLogger(options.logger, who) ?? consoleLogger
  return { raw, current, keyIds, plaintext, logger }
}
