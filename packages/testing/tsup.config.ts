import { defineConfig } from 'tsup'
import { dts, library } from '../../tsup.shared.js'

export default defineConfig([
  // The fake service's OAuth side (@scheduling-kit/fake-auth, private, shared with core's tests)
  // is bundled in: users install nothing more.
  {
    ...library,
    noExternal: ['@scheduling-kit/fake-auth'],
    dts: { ...dts, resolve: [/^@scheduling-kit\/fake-auth/] },
  },
  // The processes runRefreshRace, runRateCapRace and runRefreshAheadOutage fork.
  {
    ...library,
    entry: ['src/race-child.ts', 'src/rate-race-child.ts', 'src/outage-child.ts'],
    dts: false,
    sourcemap: false,
  },
  {
    ...library,
    entry: ['src/cli.ts'],
    dts: false,
    sourcemap: false,
    banner: { js: '#!/usr/bin/env node' },
  },
])
