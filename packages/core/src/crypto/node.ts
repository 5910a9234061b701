import { createHmac, timingSafeEqual } from 'node:crypto'
import type { HmacProvider } from './provider.js'

function mac(secret: string, data: Uint8Array): Uint8Array {
  return createHmac('sha256', secret).update(data).digest()
}

function verifySync(secret: string, data: Uint8Array, signature: Uint8Array): boolean {
  const expected = mac(secret, data)
  return expected.length === signature.length && timingSafeEqual(expected, signature)
}

export const nodeCrypto: HmacProvider = {
  name: 'node',
  async sign(secret, data) {
    return mac(secret, data)
  },
  async verify(secret, data, signature) {
    return verifySync(secret, data, signature)
  },
  verifySync,
}
