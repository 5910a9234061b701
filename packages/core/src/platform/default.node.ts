// The `node` build's allocation: no zero-filling of bytes that are overwritten at once. See
// default.ts.
import { Buffer } from 'node:buffer'

/** A byte array of `length` that the caller fills whole at once, left unzeroed. */
export const bytesToFill = (length: number): Uint8Array => Buffer.allocUnsafeSlow(length)
