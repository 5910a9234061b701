// What the Web platform allocates bytes with. Under the `node` and `deno` conditions the built
// package takes default.node.ts instead (`#platform`: rollup.config.mjs, package.json `imports`).

/** A byte array of `length` that the caller fills whole at once (zeroed here; not on Node). */
export const bytesToFill = (length: number): Uint8Array => new Uint8Array(length)
