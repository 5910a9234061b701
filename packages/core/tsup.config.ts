import { defineConfig, type Options } from 'tsup'

const shared: Options = {
  format: ['esm', 'cjs'],
  target: 'es2022',
  platform: 'neutral',
  external: ['node:crypto'],
  sourcemap: true,
}

export default defineConfig([
  // Default build: Web Crypto, for browsers, edge runtimes, Deno, Bun.
  { ...shared, entry: { index: 'src/index.ts' }, dts: true },
  // `node` export condition: the same code with node:crypto swapped in at bundle time.
  {
    ...shared,
    entry: { 'index.node': 'src/index.ts' },
    esbuildPlugins: [
      {
        name: 'node-crypto-provider',
        setup(build) {
          build.onResolve({ filter: /crypto\/default\.js$/ }, (args) => ({
            path: `${args.resolveDir}/${args.path.replace(/default\.js$/, 'default.node.ts')}`,
          }))
        },
      },
    ],
  },
])
