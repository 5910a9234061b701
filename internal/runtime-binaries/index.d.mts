/** A runtime's binary: its path, or why it is not installed. `version` is the package's. */
export interface RuntimeBinary {
  version: string
  path?: string
  missing?: string
}

export type RuntimeBinaryName = 'node20' | 'node22' | 'node24' | 'bun' | 'deno'

/** Every runtime binary of the matrix: a path to run, or why there is none. */
export function runtimeBinaries(): Record<RuntimeBinaryName, RuntimeBinary>
