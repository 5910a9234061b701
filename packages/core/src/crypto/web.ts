import { fromHex, toBytes } from '../bytes.js'
import type { HmacProvider } from './provider.js'

const MAX_CACHED_KEYS = 256
const encoder = new TextEncoder()
const keys = new Map<string, Promise<CryptoKey>>()

/** Imports the HMAC key for a secret once and keeps it; the oldest key is dropped past 256. */
function keyFor(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret)
  if (key === undefined) {
    key = globalThis.crypto.subtle.importKey(
      'raw',
      encoder.encode(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign', 'verify'],
    )
    key.catch(() => keys.delete(secret))
    if (keys.size >= MAX_CACHED_KEYS) keys.delete(keys.keys().next().value as string)
    keys.set(secret, key)
  }
  return key
}

// Web Crypto wants a BufferSource backed by an ArrayBuffer; Uint8Array<ArrayBufferLike> is fine at run time.
type Source = Parameters<SubtleCrypto['sign']>[2]

export const webCrypto: HmacProvider = {
  name: 'web',
  async sign(secret, data) {
    const mac = await globalThis.crypto.subtle.sign(
      'HMAC',
      await keyFor(secret),
      toBytes(data) as Source,
    )
    return new Uint8Array(mac)
  },
  async verify(secret, data, hex) {
    const signature = hex.length === 64 ? fromHex(hex) : undefined
    if (signature === undefined) return false
    // subtle.verify compares in constant time.
    return globalThis.crypto.subtle.verify(
      'HMAC',
      await keyFor(secret),
      signature as Source,
      toBytes(data) as Source,
    )
  },
}
