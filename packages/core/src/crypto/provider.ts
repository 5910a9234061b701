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

/**
 * AES-256-GCM for sealed credentials (see credentials/cipher.ts), with a 96-bit IV and a 128-bit tag, on strings: plaintexts are UTF-8, the IV,
 * ciphertext and tag base64url (checked as canonical by the caller before `decrypt`). Each
 * platform encodes with what is fastest there.
 */
export interface AesGcmProvider {
  /** A key object for 32 raw bytes. */
  importKey(raw: Uint8Array): Promise<unknown>
  /** 12 random bytes, base64url. */
  randomIv(): string
  /** `[ciphertext, tag]`, base64url. */
  encrypt(
    key: unknown,
    iv: string,
    aad: string,
    plaintext: string,
  ): [string, string] | Promise<[string, string]>
  /** The plaintext, or `undefined` when the tag does not authenticate the rest. */
  decrypt(
    key: unknown,
    iv: string,
    aad: string,
    ciphertext: string,
    tag: string,
  ): string | undefined | Promise<string | undefined>
}
