// What the default build allocates bytes with. The `node` build replaces this module with
// default.node.ts at bundle time (rollup.config.mjs).

/** A byte array of `length` that the caller fills whole at once (zeroed here; not on Node). */
export const bytesToFill = (length: number): Uint8Array => new Uint8Array(length)
