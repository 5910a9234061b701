import { defineConfig, type Options } from 'tsup'
import { library } from '../../tsup.shared.js'

// Three entry points (`.`, `./adapter` and `./app`), platform-neutral: core runs wherever Fetch does.
const shared: Options = {
  ...library,
  platform: 'neutral',
  external: ['node:crypto', 'node:buffer', 'node:module'],
}
const entry = { index: 'src/index.ts', adapter: 'src/adapter.ts', app: 'src/app.ts' }

export default defineConfig([
  // Default build: Web Crypto, for workerd (its export condition), browsers and other edge
  // runtimes. Bun matches `node`, and Deno's own condition points at the node build too.
  { ...shared, entry },
  // `node` export condition: the same code with node:crypto (and node:buffer's allocation)
  // swapped in at bundle time.
  {
    ...shared,
    entry: { 'index.node': entry.index, 'adapter.node': entry.adapter, 'app.node': entry.app },
    dts: false,
    // `import.meta.url` in the CommonJS file too (the OpenTelemetry API is required from there).
    shims: true,
    esbuildPlugins: [
      {
        name: 'node-platform',
        setup(build) {
          build.onResolve({ filter: /(crypto|platform)\/default\.js$/ }, (args) => ({
            path: `${args.resolveDir}/${args.path.replace(/default\.js$/, 'default.node.ts')}`,
          }))
        },
      },
    ],
  },
])
