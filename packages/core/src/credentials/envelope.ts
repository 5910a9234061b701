import type { CredentialContext } from './types.js'

// The sealed value's envelope: `skc1.<key id>.<context check>.<iv>.<ciphertext>.<tag>`, read
// without a key. What it says is checked before anything is decrypted.

/** The envelope's format tag: the first field of every sealed value. */
const FORMAT = 'skc1'
export const PREFIX = `${FORMAT}.`
export const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/
const BASE64URL = /^[A-Za-z0-9_-]*$/
/** Last characters allowed where a base64url text ends in unused bits, by `length % 4`. */
const CANONICAL_LAST: Record<number, RegExp> = { 2: /[AQgw]$/, 3: /[AEIMQUYcgkosw048]$/ }

/** True for a value `seal` wrote (by its format tag; it is not opened). */
export function isSealedCredential(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX)
}

/** The key id a sealed value names, read from its envelope without opening it. */
export function keyIdOf(value: unknown): string | undefined {
  if (!isSealedCredential(value)) return undefined
  const end = value.indexOf('.', PREFIX.length)
  return end < 0 ? undefined : value.slice(PREFIX.length, end)
}

/**
 * A check of the context, kept in the envelope in the clear: FNV-1a over its UTF-16, 8 hex
 * digits. It only tells a record copied from another key (`credential_mismatch`) from one
 * changed in place (`credential_tampered`); the authenticated data is what refuses both.
 */
export function contextCheck(context: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < context.length; i++) {
    hash ^= context.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(16).padStart(8, '0')
}

/** The context as one string: JSON keeps every key distinct (lone surrogates escaped). */
export const contextText = (context: CredentialContext) => JSON.stringify(context)

function canonical(text: string, length?: number): boolean {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return false
  if (length !== undefined && text.length !== length) return false
  return CANONICAL_LAST[text.length % 4]?.test(text) ?? true
}

/** An envelope's fields, each checked for its form. */
export interface Envelope {
  keyId: string
  check: string
  iv: string
  ciphertext: string
  tag: string
}

/** Why an envelope cannot be opened: the error's code, the key id it names, and the reason. */
export interface EnvelopeProblem {
  code: 'credential_malformed' | 'credential_key_unknown' | 'credential_mismatch'
  keyId: string | undefined
  why: string
}

/**
 * Reads a sealed value's envelope for `context` (its text), against the key ids a cipher has:
 * its fields, or what is wrong with it, in the order a reader would fix it.
 */
export function readEnvelope(
  sealed: unknown,
  context: string,
  known: ReadonlySet<string>,
): Envelope | EnvelopeProblem {
  const parts = typeof sealed === 'string' ? sealed.split('.') : []
  const keyId = parts[1]
  if (parts[0] !== FORMAT || keyId === undefined || !KEY_ID.test(keyId))
    return {
      code: 'credential_malformed',
      keyId: undefined,
      why: 'it is not a sealed credential (skc1.<key id>...)',
    }
  if (!known.has(keyId))
    return {
      code: 'credential_key_unknown',
      keyId,
      why: `this cipher has no key "${keyId}" (it has ${[...known].join(', ')}): add it to keys`,
    }
  if (parts.length !== 6)
    return {
      code: 'credential_malformed',
      keyId,
      why: `it has ${parts.length} fields, not 6 (a part is missing)`,
    }
  const [, , check, iv, ciphertext, tag] = parts as [string, string, string, string, string, string]
  if (
    !/^[0-9a-f]{8}$/.test(check) ||
    !canonical(iv, 16) ||
    !canonical(ciphertext) ||
    !canonical(tag, 22)
  )
    return {
      code: 'credential_malformed',
      keyId,
      why: 'a field is not what it must be (context check, IV, ciphertext or tag)',
    }
  if (check !== contextCheck(context))
    return {
      code: 'credential_mismatch',
      keyId,
      why: `it was sealed (under key id "${keyId}") for another store key: a record copied from another account is never used`,
    }
  return { keyId, check, iv, ciphertext, tag }
}
