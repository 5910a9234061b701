import { defineConfig } from 'tsup'

export default defineConfig([
  {
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    // The fake service's OAuth side (internal/fake-auth, shared with core's tests) is bundled in.
    dts: true,
    target: 'es2022',
    platform: 'node',
    sourcemap: true,
  },
  {
    entry: ['src/cli.ts'],
    format: ['esm'],
    target: 'es2022',
    platform: 'node',
    banner: { js: '#!/usr/bin/env node' },
  },
])
