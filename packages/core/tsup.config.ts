import { readdirSync } from 'node:fs'
import { defineConfig } from 'tsup'
import { dts, library } from '../../tsup.shared.js'

// Declarations only: the JavaScript is built by rollup.config.mjs, one chunk per layer. One
// entry point per concern beside the root: every file of src/entries/.
const ENTRIES = readdirSync('src/entries').map((file) => file.replace(/\.ts$/, ''))
const entry: Record<string, string> = { index: 'src/index.ts' }
for (const name of ENTRIES) entry[name] = `src/entries/${name}.ts`

export default defineConfig({
  ...library,
  entry,
  platform: 'neutral',
  dts: { ...dts, only: true },
})
