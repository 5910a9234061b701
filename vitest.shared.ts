import { defineConfig } from 'vitest/config'

/** Settings every package's vitest config starts from. */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Each package writes a JSON report; scripts/test.mjs adds them up into one closing line.
    reporters: ['default', ['json', { outputFile: 'test-output/vitest.json' }]],
    testTimeout: 20_000,
  },
})
