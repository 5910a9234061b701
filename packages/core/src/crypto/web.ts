import { fromBase64Url, fromHex, toBase64Url, toBytes, utf8 } from '../platform/bytes.js'
import type { AesGcmProvider, HmacProvider } from './provider.js'

const MAX_CACHED_KEYS = 256
const encoder = /* @__PURE__ */ new TextEncoder()
const keys = /* @__PURE__ */ new Map<string, Promise<CryptoKey>>()

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

/** `ciphertext || tag`, as Web Crypto takes them. */
function joined(ciphertext: string, tag: string): Uint8Array {
  const body = fromBase64Url(ciphertext)!
  const out = new Uint8Array(body.length + 16)
  out.set(body)
  out.set(fromBase64Url(tag)!, body.length)
  return out
}

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

/** AES-256-GCM on Web Crypto, for sealed credentials: apart from HMAC, so verifying costs no cipher. */
export const webAesGcm: AesGcmProvider = {
  importKey: (raw) =>
    globalThis.crypto.subtle.importKey('raw', raw as Source, 'AES-GCM', false, [
      'encrypt',
      'decrypt',
    ]),
  randomIv: () => toBase64Url(globalThis.crypto.getRandomValues(new Uint8Array(12))),
  async encrypt(key, iv, aad, plaintext) {
    const sealed = new Uint8Array(
      await globalThis.crypto.subtle.encrypt(
        {
          name: 'AES-GCM',
          iv: fromBase64Url(iv) as Source,
          additionalData: encoder.encode(aad),
          tagLength: 128,
        },
        key as CryptoKey,
        encoder.encode(plaintext),
      ),
    )
    const end = sealed.length - 16
    return [toBase64Url(sealed.subarray(0, end)), toBase64Url(sealed.subarray(end))]
  },
  async decrypt(key, iv, aad, ciphertext, tag) {
    let plain: ArrayBuffer
    try {
      plain = await globalThis.crypto.subtle.decrypt(
        {
          name: 'AES-GCM',
          iv: fromBase64Url(iv) as Source,
          additionalData: encoder.encode(aad),
          tagLength: 128,
        },
        key as CryptoKey,
        joined(ciphertext, tag) as Source,
      )
    } catch {
      return undefined // the tag does not match
    }
    return utf8(new Uint8Array(plain))
  },
}
