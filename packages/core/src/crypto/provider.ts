/** HMAC-SHA256 as the toolkit needs it; one implementation per platform. */
export interface HmacProvider {
  readonly name: 'node' | 'web'
  sign(secret: string, data: Uint8Array): Promise<Uint8Array>
  /** Constant-time check that `signature` is the HMAC of `data` under `secret`. */
  verify(secret: string, data: Uint8Array, signature: Uint8Array): Promise<boolean>
  /**
   * The same check done synchronously where the platform can (node:crypto), against the
   * signature as 64 lower-case hex digits (anything else simply does not match).
   */
  verifyHexSync?(secret: string, data: Uint8Array, hex: string): boolean
}
