import { createHmac, timingSafeEqual } from 'node:crypto'
import type { HmacProvider } from './provider.js'

function mac(secret: string, data: Uint8Array): Uint8Array {
  return createHmac('sha256', secret).update(data).digest()
}

export const nodeCrypto: HmacProvider = {
  name: 'node',
  async sign(secret, data) {
    return mac(secret, data)
  },
  async verify(secret, data, signature) {
    const expected = mac(secret, data)
    return expected.length === signature.length && timingSafeEqual(expected, signature)
  },
}
