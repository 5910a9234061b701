// Core's JavaScript, built by concern: each entry point (src/entries/) loads its own layer and
// the layers under it, in a few files rather than one chunk per set of entries that share code.
// A module belongs to the first layer below whose entries reach it by static imports; layers go
// from the floor up, so a layer imports only layers before it. What only a dynamic import
// reaches (the node build's telemetry) gets a chunk of its own, loaded when it is needed.
// Declarations come from tsup (tsup.config.ts); two builds: the default (Web Crypto) and the
// `node` condition's, where modules named `default.js` are swapped for `default.node.ts`.
import { readdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { transform } from 'esbuild'

const here = dirname(fileURLToPath(import.meta.url))
const src = join(here, 'src')
const entry = (name) => join(src, 'entries', `${name}.ts`)

// One entry point per concern beside the root: every file of src/entries/.
const ENTRIES = readdirSync(join(src, 'entries')).map((file) => file.replace(/\.ts$/, ''))

/** The layers, floor first: a layer's chunk holds what its entries reach and no layer before. */
const LAYERS = [
  ['webhooks', ['webhooks', 'adapter']],
  ['errors', ['errors']],
  ['telemetry', ['telemetry']],
  ['tokens', ['tokens', 'credentials', 'client', 'store']],
  ['subscriptions', ['subscriptions']],
  ['oauth', ['oauth']],
  ['ledger', ['ledger', 'queue']],
  ['app', ['app', 'setup']],
]

/** TypeScript in, JavaScript out, one module at a time; `.js` specifiers resolve to `.ts`. */
function typescript(node) {
  return {
    name: 'typescript',
    resolveId(source, importer) {
      if (importer === undefined || !source.startsWith('.')) return null
      const target = resolve(dirname(importer), source)
      if (node && target.endsWith('/default.js')) return target.replace(/\.js$/, '.node.ts')
      return target.replace(/\.js$/, '.ts')
    },
    async transform(code, id) {
      if (!id.endsWith('.ts')) return null
      const out = await transform(code, {
        loader: 'ts',
        format: 'esm',
        target: 'es2022',
        sourcemap: true,
        sourcefile: id,
      })
      return { code: out.code, map: out.map }
    },
  }
}

/** Which layer each module is in, computed once the graph is known. */
function layers() {
  let layerOf
  return (id, { getModuleInfo }) => {
    if (layerOf === undefined) {
      layerOf = new Map()
      for (const [layer, entries] of LAYERS) {
        const stack = entries.map(entry)
        while (stack.length > 0) {
          const next = stack.pop()
          if (layerOf.has(next)) continue
          layerOf.set(next, layer)
          stack.push(...(getModuleInfo(next)?.importedIds ?? []))
        }
      }
    }
    // Entry modules stay files of their own (their exports, nothing else): facades over layers.
    if (!id.startsWith(src) || id.startsWith(join(src, 'entries')) || id === join(src, 'index.ts'))
      return undefined
    return layerOf.get(id)
  }
}

function build(node) {
  const suffix = node ? '.node' : ''
  const input = { index: join(src, 'index.ts') }
  for (const name of ENTRIES) input[name] = entry(name)
  const output = (format, extension) => ({
    dir: 'dist',
    format,
    entryFileNames: `[name]${suffix}.${extension}`,
    chunkFileNames: `chunks/[name]${suffix}-[hash].${extension}`,
    manualChunks: layers(),
    sourcemap: true,
    sourcemapExcludeSources: true,
    // A named export per binding, `exports.x` in CommonJS, as tsup wrote it.
    exports: 'named',
    interop: 'auto',
    generatedCode: 'es2015',
    hoistTransitiveImports: false,
  })
  return {
    input,
    external: (id) => id.startsWith('node:'),
    plugins: [typescript(node)],
    treeshake: { moduleSideEffects: false },
    // An entry exports its own names only: shared code is imported from a chunk, never from it.
    preserveEntrySignatures: 'strict',
    output: [output('es', 'js'), output('cjs', 'cjs')],
    onwarn(warning, warn) {
      if (
        warning.code === 'CIRCULAR_DEPENDENCY' &&
        !warning.ids?.some((i) => i.includes('/chunks/'))
      )
        return
      warn(warning)
    },
  }
}

export default [build(false), build(true)]
