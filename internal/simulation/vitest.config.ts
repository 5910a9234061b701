import { defineConfig, mergeConfig } from 'vitest/config'
import shared from '../../vitest.shared.js'

// A simulation runs days of virtual time over thousands of accounts: 41 s for the largest on a
// loaded 2-core CI run (4.5 s on a quiet one), and past the shared 120 s on a busier one. Its time-out
// catches a hang, not a busy machine.
export default mergeConfig(shared, defineConfig({ test: { testTimeout: 600_000 } }))
