import { webCrypto } from './web.js'

/** HMAC-SHA256 as the toolkit needs it; one implementation per platform. */
export interface HmacProvider {
  readonly name: 'node' | 'web'
  sign(secret: string, data: Uint8Array): Promise<Uint8Array>
  /** Constant-time check that `signature` is the HMAC of `data` under `secret`. */
  verify(secret: string, data: Uint8Array, signature: Uint8Array): Promise<boolean>
}

let current: HmacProvider = webCrypto

/** The provider in use: Web Crypto, unless the `node` entry point installed node:crypto. */
export function cryptoProvider(): HmacProvider {
  return current
}

export function setCryptoProvider(provider: HmacProvider): void {
  current = provider
}
