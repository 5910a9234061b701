/**
 * HMAC-SHA256 as the toolkit needs it; one implementation per platform, chosen by the build
 * (see default.ts). `verify` answers synchronously where the platform can (node:crypto) and
 * with a promise where it cannot (Web Crypto): callers await only a promise.
 *
 * `data` is bytes or a string hashed as its UTF-8 (lone surrogates as U+FFFD, as `TextEncoder`
 * writes them): node:crypto hashes a string without a copy.
 */
export interface HmacProvider {
  readonly name: 'node' | 'web'
  sign(secret: string, data: string | Uint8Array): Promise<Uint8Array>
  /**
   * Constant-time check that `hex` is the HMAC of `data` under `secret`. `hex` is 64 ASCII hex
   * digits in either case; anything else (another length, a character that is not an ASCII
   * hex digit) simply does not match.
   */
  verify(secret: string, data: string | Uint8Array, hex: string): boolean | Promise<boolean>
}
