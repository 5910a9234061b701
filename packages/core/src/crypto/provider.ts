/**
 * HMAC-SHA256 as the toolkit needs it; one implementation per platform, chosen by the build
 * (see default.ts). `verify` answers synchronously where the platform can (node:crypto) and
 * with a promise where it cannot (Web Crypto): callers await only a promise.
 */
export interface HmacProvider {
  readonly name: 'node' | 'web'
  sign(secret: string, data: Uint8Array): Promise<Uint8Array>
  /**
   * Constant-time check that `hex` (64 lower-case hex digits; anything else simply does not
   * match) is the HMAC of `data` under `secret`.
   */
  verify(secret: string, data: Uint8Array, hex: string): boolean | Promise<boolean>
}
