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

/**
 * Parses a signature header: `sha256=` is optional, hex may be in either case, surrounding
 * white space is ignored. `undefined` when it is not a SHA-256 digest.
 */
export function parseSignatureHeader(header: string): Uint8Array | undefined {
  // Fast path: the exact form the service sends.
  if (header.length === PREFIX.length + DIGEST_BYTES * 2 && header.startsWith(PREFIX)) {
    return fromHex(header.slice(PREFIX.length))
  }
  let hex = header.trim()
  if (hex.slice(0, PREFIX.length).toLowerCase() === PREFIX) hex = hex.slice(PREFIX.length)
  if (hex.length !== DIGEST_BYTES * 2) return undefined
  return fromHex(hex)
}

interface Prepared {
  data: Uint8Array
  signature: Uint8Array
  secrets: readonly string[]
}

/** Decodes the inputs once; `undefined` when the header cannot be a SHA-256 digest. */
function prepare(body: RawBody, header: unknown, secrets: Secrets): Prepared | undefined {
  if (typeof header !== 'string') return undefined
  const signature = parseSignatureHeader(header)
  if (signature === undefined) return undefined
  return {
    data: toBytes(body),
    signature,
    secrets: typeof secrets === 'string' ? [secrets] : secrets,
  }
}

function matchSync(verify: NonNullable<HmacProvider['verifySync']>, p: Prepared): number {
  for (let i = 0; i < p.secrets.length; i++) {
    const secret = p.secrets[i]
    if (typeof secret === 'string' && secret !== '' && verify(secret, p.data, p.signature)) return i
  }
  return -1
}

async function matchAsync(provider: HmacProvider, p: Prepared): Promise<number> {
  for (let i = 0; i < p.secrets.length; i++) {
    const secret = p.secrets[i]
    if (
      typeof secret === 'string' &&
      secret !== '' &&
      (await provider.verify(secret, p.data, p.signature))
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
    const prepared = prepare(body, header, secrets)
    if (prepared === undefined) return Promise.resolve(-1)
    if (provider.verifySync !== undefined)
      return Promise.resolve(matchSync(provider.verifySync, prepared))
    return matchAsync(provider, prepared)
  } catch (error) {
    return Promise.reject(error)
  }
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
    const prepared = prepare(body, header, secrets)
    if (prepared === undefined) return Promise.resolve(false)
    const { verifySync } = defaultProvider
    if (verifySync !== undefined) return Promise.resolve(matchSync(verifySync, prepared) >= 0)
    return matchAsync(defaultProvider, prepared).then((index) => index >= 0)
  } catch (error) {
    return Promise.reject(error)
  }
}
