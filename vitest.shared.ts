import { defineConfig } from 'vitest/config'

/** Settings every package's vitest config starts from. */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Each package writes a JSON report; scripts/test.mjs adds them up into one closing line.
    reporters: ['default', ['json', { outputFile: 'test-output/vitest.json' }]],
    testTimeout: 20_000,
    // Node's servers refuse request heads over 16 KiB by default; the hardening cases send
    // a megabyte of header to show its parse is linear (a runtime without the limit gets it).
    execArgv: ['--max-http-header-size=4194304'],
  },
})
