import { fromHex, toBytes, toHexUpper } from './bytes.js'
import { defaultProvider } from './crypto/default.js'
import type { HmacProvider } from './crypto/provider.js'

/** The body as the service sent it: the raw bytes, or the exact string they decode to. */
export type RawBody = string | Uint8Array

/** One signing secret, or several while a secret is being rotated (the first that matches wins). */
export type Secrets = string | readonly string[]

const PREFIX = 'sha256='
const DIGEST_BYTES = 32

/** Computes the signature header value the service would send: `sha256=<UPPER-CASE HEX>`. */
export async function signPayload(body: RawBody, secret: string): Promise<string> {
  return signWith(defaultProvider, body, secret)
}

export async function signWith(
  provider: HmacProvider,
  body: RawBody,
  secret: string,
): Promise<string> {
  return PREFIX + toHexUpper(await provider.sign(secret, toBytes(body)))
}

const HEX_DIGEST = /^[0-9a-fA-F]{64}$/
/** HTTP's optional white space around a field value: spaces and tabs only (RFC 9110, 5.6.3). */
const OWS = /^[ \t]+|[ \t]+$/g

/**
 * The digest part of a signature header, lower-cased: `sha256=` is optional, hex may be in
 * either case, surrounding spaces and tabs are ignored (other white space, such as a no-break space,
 * is not HTTP's and refuses the header). `undefined` unless it is 64 ASCII hex
 * digits (full-width or other look-alike digits are refused in every build).
 */
function signatureHex(header: string): string | undefined {
  // Fast path: the exact form the service sends.
  let hex =
    header.length === PREFIX.length + DIGEST_BYTES * 2 && header.startsWith(PREFIX)
      ? header.slice(PREFIX.length)
      : header.replace(OWS, '')
  if (hex.length !== DIGEST_BYTES * 2) {
    if (hex.slice(0, PREFIX.length).toLowerCase() !== PREFIX) return undefined
    hex = hex.slice(PREFIX.length)
  }
  return HEX_DIGEST.test(hex) ? hex.toLowerCase() : undefined
}

/** Parses a signature header into the 32 digest bytes; `undefined` when it is not a SHA-256 digest. */
export function parseSignatureHeader(header: string): Uint8Array | undefined {
  const hex = signatureHex(header)
  return hex === undefined ? undefined : fromHex(hex)
}

function secretList(secrets: Secrets): readonly string[] {
  return typeof secrets === 'string' ? [secrets] : secrets
}

function matchSync(
  verify: NonNullable<HmacProvider['verifyHexSync']>,
  data: Uint8Array,
  hex: string,
  secrets: Secrets,
): number {
  if (typeof secrets === 'string') return secrets !== '' && verify(secrets, data, hex) ? 0 : -1
  for (let i = 0; i < secrets.length; i++) {
    const secret = secrets[i]
    if (typeof secret === 'string' && secret !== '' && verify(secret, data, hex)) return i
  }
  return -1
}

async function matchAsync(
  provider: HmacProvider,
  data: Uint8Array,
  hex: string,
  secrets: Secrets,
): Promise<number> {
  const signature = fromHex(hex)
  if (signature === undefined) return -1
  const list = secretList(secrets)
  for (let i = 0; i < list.length; i++) {
    const secret = list[i]
    if (
      typeof secret === 'string' &&
      secret !== '' &&
      (await provider.verify(secret, data, signature))
    ) {
      return i
    }
  }
  return -1
}

/**
 * `matchSignature` with a given provider. A synchronous provider (node:crypto) answers with a
 * promise that is already settled: no extra turns of the event loop on the hot path.
 */
export function matchWith(
  provider: HmacProvider,
  body: RawBody,
  header: string | null | undefined,
  secrets: Secrets,
): Promise<number> {
  try {
    const hex = typeof header === 'string' ? signatureHex(header) : undefined
    if (hex === undefined) return Promise.resolve(-1)
    const data = toBytes(body)
    if (provider.verifyHexSync !== undefined)
      return Promise.resolve(matchSync(provider.verifyHexSync, data, hex, secrets))
    return matchAsync(provider, data, hex, secrets)
  } catch (error) {
    return Promise.reject(error)
  }
}

/**
 * `matchSignature` done synchronously where the platform can (node:crypto); `undefined` where
 * it cannot (Web Crypto), so that the caller awaits `matchSignature` instead.
 */
export function matchSignatureSync(
  body: RawBody,
  header: string | null | undefined,
  secrets: Secrets,
): number | undefined {
  const { verifyHexSync } = defaultProvider
  if (verifyHexSync === undefined) return undefined
  const hex = typeof header === 'string' ? signatureHex(header) : undefined
  return hex === undefined ? -1 : matchSync(verifyHexSync, toBytes(body), hex, secrets)
}

/**
 * Checks the signature header against the body with each secret in turn, in constant time.
 * Resolves to the index of the secret that matched, or -1 when none did (or the header is
 * not a SHA-256 digest).
 */
export function matchSignature(
  body: RawBody,
  header: string | null | undefined,
  secrets: Secrets,
): Promise<number> {
  return matchWith(defaultProvider, body, header, secrets)
}

/**
 * True when the header (`sha256=<hex>`, either case, prefix optional) is the HMAC-SHA256 of
 * the body under one of the secrets. Compares in constant time. Use `matchSignature` to learn
 * which secret matched.
 */
export function verifySignature(
  body: RawBody,
  header: string | null | undefined,
  secrets: Secrets,
): Promise<boolean> {
  // Not matchWith(...).then(): that costs one more promise on the hot path.
  try {
    const hex = typeof header === 'string' ? signatureHex(header) : undefined
    if (hex === undefined) return Promise.resolve(false)
    const data = toBytes(body)
    const { verifyHexSync } = defaultProvider
    if (verifyHexSync !== undefined)
      return Promise.resolve(matchSync(verifyHexSync, data, hex, secrets) >= 0)
    return matchAsync(defaultProvider, data, hex, secrets).then((index) => index >= 0)
  } catch (error) {
    return Promise.reject(error)
  }
}
