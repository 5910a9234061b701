/**
 * A runtime's binary: its path; or `unavailable`, the registry has none for this platform; or
 * `missing`, fetching it failed. `version` is the package's.
 */
export interface RuntimeBinary {
  version: string
  path?: string
  unavailable?: string
  missing?: string
}

export type RuntimeBinaryName = 'node22' | 'node24' | 'node26' | 'bun' | 'deno'

/** Where fetched runtimes are kept between runs. */
export const cacheDir: string

/** One Node binary of the matrix, fetched (or found in the cache): a path, or why not. */
export function nodeBinary(name: 'node22' | 'node24' | 'node26'): Promise<RuntimeBinary>

/** Every runtime binary of the matrix, fetched (or found in the cache): a path, or why not. */
export function runtimeBinaries(): Promise<Record<RuntimeBinaryName, RuntimeBinary>>

/** Miniflare and its workerd, installed with npm into the cache. */
export function miniflare():
  | { entry: string; version: string; workerdVersion: string; missing?: undefined }
  | { version: string; missing: string; entry?: undefined; workerdVersion?: undefined }
