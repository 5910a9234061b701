// The node platform's allocation: no zero-filling of bytes that are overwritten at once. See
// default.ts. Node's global `Buffer` (Bun's and Deno's too, in npm packages) rather than an
// import of `node:buffer`, which costs Node about 1.3 M instructions at start-up.

const { Buffer } = globalThis as { Buffer?: { allocUnsafeSlow(length: number): Uint8Array } }

/** A byte array of `length` that the caller fills whole at once, left unzeroed. */
export const bytesToFill: (length: number) => Uint8Array =
  Buffer === undefined
    ? (length) => new Uint8Array(length)
    : (length) => Buffer.allocUnsafeSlow(length)
