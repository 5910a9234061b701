import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  type KeyObject,
  randomBytes,
} from 'node:crypto'
import type { AesGcmProvider, HmacProvider } from './provider.js'

/** 0 for each ASCII hex digit's code (0-9, A-F, a-f), 1 for every other code below 128. */
const NOT_HEX = /* @__PURE__ */ (() => {
  const table = new Uint8Array(128).fill(1)
  for (const c of '0123456789abcdefABCDEF') table[c.charCodeAt(0)] = 0
  return table
})()

export const nodeCrypto: HmacProvider = {
  name: 'node',
  async sign(secret, data) {
    return createHmac('sha256', secret).update(data).digest()
  },
  /**
   * One pass over the candidate, in time that depends only on its length (no early exit): each
   * character must be an ASCII hex digit (`| 0x20` lower-cases A-F and leaves the digits as they
   * are) equal to the lower-case hex digest's. A string body is hashed as its UTF-8 without a copy.
   */
  verify(secret, data, hex) {
    if (hex.length !== 64) return false
    const expected = createHmac('sha256', secret).update(data).digest('hex')
    let diff = 0
    for (let i = 0; i < 64; i++) {
      const code = hex.charCodeAt(i)
      diff |= (code < 128 ? NOT_HEX[code]! : 1) | (expected.charCodeAt(i) ^ (code | 0x20))
    }
    return diff === 0
  },
}

/** AES-256-GCM on node:crypto, for sealed credentials: apart from HMAC, so verifying costs no cipher. */
export const nodeAesGcm: AesGcmProvider = {
  async importKey(raw) {
    return createSecretKey(raw)
  },
  randomIv: () => randomBytes(12).toString('base64url'),
  encrypt(key, iv, aad, plaintext) {
    const cipher = createCipheriv('aes-256-gcm', key as KeyObject, Buffer.from(iv, 'base64url'))
    cipher.setAAD(Buffer.from(aad))
    const head = cipher.update(plaintext, 'utf8', 'base64url')
    return [head + cipher.final('base64url'), cipher.getAuthTag().toString('base64url')]
  },
  decrypt(key, iv, aad, ciphertext, tag) {
    const decipher = createDecipheriv(
      'aes-256-gcm',
      key as KeyObject,
      Buffer.from(iv, 'base64url'),
      {
        authTagLength: 16,
      },
    )
    decipher.setAAD(Buffer.from(aad))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    const head = decipher.update(ciphertext, 'base64url', 'utf8')
    try {
      return head + decipher.final('utf8')
    } catch {
      return undefined // the tag does not match
    }
  },
}
