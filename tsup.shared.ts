import type { Options } from 'tsup'

/**
 * The declaration build's settings: tsup 8.5 gives the compiler a `baseUrl`, which TypeScript 6
 * deprecates (an error until silenced); the packages' own tsconfig sets none, and `tsc`
 * (`pnpm typecheck`) keeps every deprecation an error.
 */
export const dts = { compilerOptions: { ignoreDeprecations: '6.0' } }

/**
 * Settings every published package's build starts from: `src/index.ts` as ESM only, with types
 * and source maps (without `sourcesContent`). There is no CommonJS build: Node 22.12+
 * `require()`s an ES module. A package's tsup.config.ts spreads it and says only what differs.
 */
export const library: Options = {
  entry: ['src/index.ts'],
  format: ['esm'],
  dts,
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
