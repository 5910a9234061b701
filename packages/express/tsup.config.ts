import { defineConfig } from 'tsup'
import { library } from '../../tsup.shared.js'

// The whole adapter, and its webhooks middleware alone (`/webhooks`).
export default defineConfig({
  ...library,
  entry: { index: 'src/index.ts', webhooks: 'src/entries/webhooks.ts' },
  // Each entry whole, no shared chunk: an app loads one file of this package.
  splitting: false,
})
