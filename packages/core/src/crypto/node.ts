import { createHmac } from 'node:crypto'
import type { HmacProvider } from './provider.js'

/** 0 for each ASCII hex digit's code (0-9, A-F, a-f), 1 for every other code below 128. */
const NOT_HEX = new Uint8Array(128).fill(1)
for (const c of '0123456789abcdefABCDEF') NOT_HEX[c.charCodeAt(0)] = 0

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
