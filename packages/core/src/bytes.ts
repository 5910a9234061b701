const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8', { fatal: true })

/** UTF-8 bytes of a string; a `Uint8Array` is returned as it is. */
export function toBytes(value: string | Uint8Array): Uint8Array {
  return typeof value === 'string' ? encoder.encode(value) : value
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

function nibble(code: number): number {
  if (code >= 48 && code <= 57) return code - 48 // 0-9
  if (code >= 65 && code <= 70) return code - 55 // A-F
  if (code >= 97 && code <= 102) return code - 87 // a-f
  return -1
}

/** Decodes hex in either case; `undefined` when the text is not hex of even length. */
export function fromHex(text: string): Uint8Array | undefined {
  if (text.length % 2 !== 0) return undefined
  const out = new Uint8Array(text.length / 2)
  for (let i = 0; i < out.length; i++) {
    const hi = nibble(text.charCodeAt(2 * i))
    const lo = nibble(text.charCodeAt(2 * i + 1))
    if (hi < 0 || lo < 0) return undefined
    out[i] = (hi << 4) | lo
  }
  return out
}

/** Compares two byte arrays in time that depends only on their length. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!
  return diff === 0
}
