import { fileURLToPath } from 'node:url'
import type { NextConfig } from 'next'

// The monorepo's root: the workspace packages are linked from there (a user's app installs
// them from the registry and needs neither setting).
const root = fileURLToPath(new URL('../..', import.meta.url))

const config: NextConfig = {
  outputFileTracingRoot: root,
  turbopack: { root },
}

export default config
