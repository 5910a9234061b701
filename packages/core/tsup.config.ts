import { defineConfig, type Options } from 'tsup'
import { library } from '../../tsup.shared.js'

// One entry point per concern beside the root (src/entries/), platform-neutral: core runs
// wherever Fetch does.
const shared: Options = {
  ...library,
  platform: 'neutral',
  external: ['node:crypto', 'node:buffer', 'node:module'],
  // Shared chunks in the CommonJS build too (tsup splits only ESM by default): without them each
  // of the thirteen entries carries its own copy of everything it reaches.
  splitting: true,
}
const ENTRIES = [
  'adapter',
  'app',
  'client',
  'credentials',
  'errors',
  'ledger',
  'oauth',
  'queue',
  'setup',
  'store',
  'subscriptions',
  'telemetry',
  'tokens',
  'webhooks',
]
const entry: Record<string, string> = { index: 'src/index.ts' }
for (const name of ENTRIES) entry[name] = `src/entries/${name}.ts`
const nodeEntry = Object.fromEntries(Object.entries(entry).map(([k, v]) => [`${k}.node`, v]))

export default defineConfig([
  // Default build: Web Crypto, for workerd (its export condition), browsers and other edge
  // runtimes. Bun matches `node`, and Deno's own condition points at the node build too.
  { ...shared, entry },
  // `node` export condition: the same code with node:crypto (and node:buffer's allocation)
  // swapped in at bundle time.
  {
    ...shared,
    entry: nodeEntry,
    dts: false,
    // `import.meta.url` in the CommonJS file too (the OpenTelemetry API is required from there).
    shims: true,
    esbuildPlugins: [
      {
        name: 'node-platform',
        setup(build) {
          build.onResolve({ filter: /(^|\/)default\.js$/ }, (args) => ({
            path: `${args.resolveDir}/${args.path.replace(/default\.js$/, 'default.node.ts')}`,
          }))
        },
      },
    ],
  },
])
