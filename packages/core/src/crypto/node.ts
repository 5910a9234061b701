import { createHmac } from 'node:crypto'
import type { HmacProvider } from './provider.js'

export const nodeCrypto: HmacProvider = {
  name: 'node',
  async sign(secret, data) {
    return createHmac('sha256', secret).update(data).digest()
  },
  /**
   * Compares the lower-case hex digest with the candidate in time that depends only on the
   * length: no early exit. Comparing hex text spares decoding the header into bytes.
   */
  verify(secret, data, hex) {
    const expected = createHmac('sha256', secret).update(data).digest('hex')
    if (expected.length !== hex.length) return false
    let diff = 0
    for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ hex.charCodeAt(i)
    return diff === 0
  },
}
