import { defineConfig, mergeConfig } from 'vitest/config'
import shared from '../../vitest.shared.js'

// The test is an ES module (.mts) beside the app's CommonJS: it starts the compiled app.
export default mergeConfig(shared, defineConfig({ test: { include: ['test/**/*.test.mts'] } }))
