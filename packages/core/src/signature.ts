import { fromHex, toBytes, toHexUpper } from './bytes.js'
import { cryptoProvider, type HmacProvider } from './crypto/provider.js'

/** The body as the service sent it: the raw bytes, or the exact string they decode to. */
export type RawBody = string | Uint8Array

/** One signing secret, or several while a secret is being rotated (the first that matches wins). */
export type Secrets = string | readonly string[]

const PREFIX = 'sha256='
const DIGEST_BYTES = 32

/** Computes the signature header value the service would send: `sha256=<UPPER-CASE HEX>`. */
export async function signPayload(body: RawBody, secret: string): Promise<string> {
  return signWith(cryptoProvider(), body, secret)
}

export async function signWith(
  provider: HmacProvider,
  body: RawBody,
  secret: string,
): Promise<string> {
  return PREFIX + toHexUpper(await provider.sign(secret, toBytes(body)))
}

/**
 * Parses a signature header: `sha256=` is optional, hex may be in either case, surrounding
 * white space is ignored. `undefined` when it is not a SHA-256 digest.
 */
export function parseSignatureHeader(header: string): Uint8Array | undefined {
  let hex = header.trim()
  if (hex.slice(0, PREFIX.length).toLowerCase() === PREFIX) hex = hex.slice(PREFIX.length)
  if (hex.length !== DIGEST_BYTES * 2) return undefined
  return fromHex(hex)
}

/**
 * Checks the signature header against the body with each secret in turn, in constant time.
 * Resolves to the index of the secret that matched, or -1 when none did (or the header is
 * not a SHA-256 digest).
 */
export async function matchSignature(
  body: RawBody,
  header: string | null | undefined,
  secrets: Secrets,
): Promise<number> {
  return matchWith(cryptoProvider(), body, header, secrets)
}

export async function matchWith(
  provider: HmacProvider,
  body: RawBody,
  header: string | null | undefined,
  secrets: Secrets,
): Promise<number> {
  if (typeof header !== 'string') return -1
  const signature = parseSignatureHeader(header)
  if (signature === undefined) return -1
  const data = toBytes(body)
  const list = typeof secrets === 'string' ? [secrets] : secrets
  for (let i = 0; i < list.length; i++) {
    const secret = list[i]
    if (
      typeof secret === 'string' &&
      secret !== '' &&
      (await provider.verify(secret, data, signature))
    )
      return i
  }
  return -1
}

/**
 * True when the header (`sha256=<hex>`, either case, prefix optional) is the HMAC-SHA256 of
 * the body under one of the secrets. Compares in constant time. Use `matchSignature` to learn
 * which secret matched.
 */
export async function verifySignature(
  body: RawBody,
  header: string | null | undefined,
  secrets: Secrets,
): Promise<boolean> {
  return (await matchWith(cryptoProvider(), body, header, secrets)) >= 0
}
