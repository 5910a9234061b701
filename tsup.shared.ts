import type { Options } from 'tsup'

/**
 * Settings every published package's build starts from: `src/index.ts` as dual ESM + CJS with
 * types and source maps (without `sourcesContent`). A package's tsup.config.ts spreads it and says only what differs.
 */
export const library: Options = {
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  target: 'es2022',
  platform: 'node',
  sourcemap: true,
  // Maps without the sources' text: stack traces still name the source file and line, and the
  // tarball does not carry a second copy of every module (69% of core's tarball before).
  esbuildOptions(options) {
    options.sourcesContent = false
  },
  // Built-ins stay `node:crypto`, never bare `crypto`: the spelling Deno and workerd's
  // nodejs_compat resolve without a package of that name.
  removeNodeProtocol: false,
}
