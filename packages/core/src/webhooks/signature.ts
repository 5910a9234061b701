import { defaultProvider } from '../crypto/default.js'
import type { HmacProvider } from '../crypto/provider.js'
import { fromHex, toHexUpper } from '../platform/bytes.js'

/** The body as the service sent it: the raw bytes, or the exact string they decode to. */
export type RawBody = string | Uint8Array

/** One signing secret, or several while a secret is being rotated (the first that matches wins). */
export type Secrets = string | readonly string[]

const PREFIX = 'sha256='
const DIGEST_BYTES = 32

/**
 * Computes the signature header value the service would send: `sha256=<UPPER-CASE HEX>`.
 *
 * @example
 * ```ts
 * const header = await signPayload(JSON.stringify(event), secret) // 'sha256=…'
 * ```
 */
export async function signPayload(body: RawBody, secret: string): Promise<string> {
  return signWith(defaultProvider, body, secret)
}

export async function signWith(
  provider: HmacProvider,
  body: RawBody,
  secret: string,
): Promise<string> {
  return PREFIX + toHexUpper(await provider.sign(secret, body))
}

/**
 * The longest signature header read at all: `sha256=` and 64 hex digits, with room for HTTP's
 * optional white space around them. Anything longer is refused before it is parsed, so the work
 * a forged header costs is bounded whatever its length.
 */
export const MAX_SIGNATURE_HEADER = 256

/** HTTP's optional white space (RFC 9110, 5.6.3): a space or a horizontal tab. */
function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09
}

/**
 * The digest part of a signature header as sent: `sha256=` is optional (in any case), and
 * surrounding spaces and tabs are ignored (other white space, such as a no-break space, is not
 * HTTP's and refuses the header). `undefined` unless 64 characters are left; whether they are
 * ASCII hex digits (either case) is checked by the provider in the same pass as the comparison
 * (full-width or other look-alike digits are refused in every build). One pass over at most
 * `MAX_SIGNATURE_HEADER` characters: no regular expression, nothing that can backtrack.
 */
function signatureHex(header: string): string | undefined {
  // Fast path: the exact form the service sends.
  if (header.length === PREFIX.length + DIGEST_BYTES * 2 && header.startsWith(PREFIX)) {
    return header.slice(PREFIX.length)
  }
  if (header.length > MAX_SIGNATURE_HEADER) return undefined
  let start = 0
  let end = header.length
  while (start < end && isOws(header.charCodeAt(start))) start++
  while (end > start && isOws(header.charCodeAt(end - 1))) end--
  if (end - start === DIGEST_BYTES * 2 + PREFIX.length) {
    if (header.slice(start, start + PREFIX.length).toLowerCase() !== PREFIX) return undefined
    start += PREFIX.length
  }
  return end - start === DIGEST_BYTES * 2 ? header.slice(start, end) : undefined
}

/** Whether a header value is empty or only HTTP's optional white space (read in one pass). */
export function isBlankHeader(value: string): boolean {
  for (let i = 0; i < value.length; i++) if (!isOws(value.charCodeAt(i))) return false
  return true
}

/** Parses a signature header into the 32 digest bytes; `undefined` when it is not a SHA-256 digest. */
export function parseSignatureHeader(header: string): Uint8Array | undefined {
  const hex = signatureHex(header)
  return hex === undefined ? undefined : fromHex(hex)
}

/**
 * The one signature check: the index of the first secret whose HMAC of the body is the
 * header's digest, or -1 (also when the header is not a SHA-256 digest). A number where the
 * provider answers synchronously (node:crypto), a promise where it cannot (Web Crypto), so
 * the hot path pays no turn of the microtask queue on Node. Throws a `TypeError` when the body
 * is neither a string nor bytes.
 */
export function match(
  provider: HmacProvider,
  body: RawBody,
  header: string | null | undefined,
  secrets: Secrets,
): number | Promise<number> {
  const hex = typeof header === 'string' ? signatureHex(header) : undefined
  if (hex === undefined) return -1
  return matchFrom(provider, body, hex, secrets, 0)
}

function matchFrom(
  provider: HmacProvider,
  data: RawBody,
  hex: string,
  secrets: Secrets,
  start: number,
): number | Promise<number> {
  const count = typeof secrets === 'string' ? 1 : secrets.length
  for (let i = start; i < count; i++) {
    const secret = typeof secrets === 'string' ? secrets : secrets[i]
    if (typeof secret !== 'string' || secret === '') continue
    const verified = provider.verify(secret, data, hex)
    if (verified === true) return i
    if (verified !== false) {
      return verified.then((yes) => (yes ? i : matchFrom(provider, data, hex, secrets, i + 1)))
    }
  }
  return -1
}

/**
 * Checks the signature header against the body with each secret in turn, in constant time.
 * Resolves to the index of the secret that matched, or -1 when none did (or the header is
 * not a SHA-256 digest).
 *
 * @example
 * ```ts
 * const index = await matchSignature(rawBody, header, [newSecret, oldSecret]) // 1 while senders still use the old one
 * ```
 */
export function matchSignature(
  body: RawBody,
  header: string | null | undefined,
  secrets: Secrets,
): Promise<number> {
  try {
    return Promise.resolve(match(defaultProvider, body, header, secrets))
  } catch (error) {
    return Promise.reject(error)
  }
}

/**
 * True when the header (`sha256=<hex>`, either case, prefix optional) is the HMAC-SHA256 of
 * the body under one of the secrets. Compares in constant time. Use `matchSignature` to learn
 * which secret matched.
 *
 * @example
 * ```ts
 * if (!(await verifySignature(rawBody, request.headers.get('x-service-signature'), secret))) return new Response(null, { status: 401 })
 * ```
 */
export function verifySignature(
  body: RawBody,
  header: string | null | undefined,
  secrets: Secrets,
): Promise<boolean> {
  // Not an async function: on node:crypto the answer is already known, and a resolved promise
  // spares the async function's own turn of the microtask queue.
  try {
    const matched = match(defaultProvider, body, header, secrets)
    return typeof matched === 'number'
      ? Promise.resolve(matched >= 0)
      : matched.then((index) => index >= 0)
  } catch (error) {
    return Promise.reject(error)
  }
}
