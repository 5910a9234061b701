import { bytesToFill } from './default.js'

const encoder = /* @__PURE__ */ new TextEncoder()
const decoder = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: true })

/** UTF-8 bytes of a string; a `Uint8Array` is returned as it is. */
export function toBytes(value: string | Uint8Array): Uint8Array {
  return typeof value === 'string' ? encoder.encode(value) : value
}

/** The length in bytes of a string's UTF-8. */
export function utf8Length(text: string): number {
  return encoder.encode(text).length
}

/** Decodes UTF-8, throwing a `TypeError` on malformed input. */
export function utf8(bytes: Uint8Array): string {
  return decoder.decode(bytes)
}

const HEX_UPPER = '0123456789ABCDEF'

export function toHexUpper(bytes: Uint8Array): string {
  let out = ''
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!
    out += HEX_UPPER[b >> 4]! + HEX_UPPER[b & 15]!
  }
  return out
}

/** Value of each ASCII hex digit by char code (0-9, A-F, a-f); -1 for every other code below 128. */
// Built in a function marked pure, so a bundle that never reads hex leaves the table out.
const NIBBLE = /* @__PURE__ */ (() => {
  const table = new Int8Array(128).fill(-1)
  for (let i = 0; i < 10; i++) table[48 + i] = i
  for (let i = 0; i < 6; i++) table[65 + i] = table[97 + i] = 10 + i
  return table
})()

/** The value of the hex digit at `code`, or -1: only ASCII digits count (no full-width look-alikes). */
function nibble(code: number): number {
  return code < 128 ? NIBBLE[code]! : -1
}

/** Decodes ASCII hex in either case; `undefined` when the text is not hex of even length. */
export function fromHex(text: string): Uint8Array | undefined {
  if (text.length % 2 !== 0) return undefined
  const out = new Uint8Array(text.length / 2)
  let bad = 0
  for (let i = 0, j = 0; i < out.length; i++, j += 2) {
    const hi = nibble(text.charCodeAt(j))
    const lo = nibble(text.charCodeAt(j + 1))
    bad |= hi | lo
    out[i] = (hi << 4) | lo
  }
  return bad < 0 ? undefined : out
}

/** Compares two byte arrays in time that depends only on their length. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!
  return diff === 0
}

/** Joins chunks into one array of `total` bytes (their lengths' sum: every byte is written). */
export function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!
  const out = bytesToFill(total)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.length
  }
  return out
}

/** Base64url without padding, of bytes or of a string's UTF-8. */
export function toBase64Url(value: Uint8Array | string): string {
  const bytes = toBytes(value)
  let binary = ''
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!)
  const base64 = btoa(binary)
  // At most two `=` of padding, at the end.
  let end = base64.length
  while (end > 0 && base64.charCodeAt(end - 1) === 0x3d) end--
  return base64.slice(0, end).replace(/\+/g, '-').replace(/\//g, '_')
}

/** Decodes base64url (padding optional); `undefined` when it is not base64url. */
export function fromBase64Url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined
  try {
    const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'))
    const out = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i)
    return out
  } catch {
    return undefined
  }
}

/** Cryptographically random bytes, base64url-encoded. */
export function randomToken(bytes = 32): string {
  return toBase64Url(globalThis.crypto.getRandomValues(new Uint8Array(bytes)))
}

/** The base64url SHA-256 of a string's UTF-8: a PKCE `code_challenge` (RFC 7636, S256). */
export async function sha256Base64Url(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(text))
  return toBase64Url(new Uint8Array(digest))
}
