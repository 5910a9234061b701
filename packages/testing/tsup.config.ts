import { defineConfig } from 'tsup'
import { library } from '../../tsup.shared.js'

export default defineConfig([
  // The fake service's OAuth side (@scheduling-kit/fake-auth, private, shared with core's tests)
  // is bundled in: users install nothing more.
  {
    ...library,
    noExternal: ['@scheduling-kit/fake-auth'],
    dts: { resolve: [/^@scheduling-kit\/fake-auth/] },
    // runRefreshRace finds its child script next to itself, from the CommonJS build too.
    shims: true,
  },
  // The process runRefreshRace forks.
  {
    ...library,
    entry: ['src/race-child.ts'],
    format: ['esm'],
    dts: false,
    sourcemap: false,
  },
  {
    ...library,
    entry: ['src/cli.ts'],
    format: ['esm'],
    dts: false,
    sourcemap: false,
    banner: { js: '#!/usr/bin/env node' },
  },
])
