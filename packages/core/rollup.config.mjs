// Core's JavaScript, built by concern: each entry point (src/entries/) loads its own layer and
// the layers under it, in a few files rather than one chunk per set of entries that share code.
// A module belongs to the first layer below whose entries reach it by static imports; layers go
// from the floor up, so a layer imports only layers before it. The node platform loads the
// delivery telemetry (the telemetry layer) by a dynamic import, when an SDK has registered.
// Declarations come from tsup (tsup.config.ts). One build for every runtime: the few modules
// that differ by platform (each folder's `default.ts` and `default.node.ts`) are files of their
// own under dist/runtime/, imported as `#platform` or `#telemetry/api` and chosen by
// package.json's `imports` conditions (`node` and `deno`: the node file; everything else, workerd
// included: the default).
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
  // The toolkit loaded at first use: its entry loads the rest (the app layer) by a dynamic import.
  ['lazy', ['lazy']],
  ['telemetry', ['telemetry']],
  // The composed webhook path's parts: on the webhook path's pieces, apart from the preset.
  ['compose', ['compose']],
  ['tokens', ['tokens', 'credentials', 'client', 'store']],
  ['subscriptions', ['subscriptions']],
  ['oauth', ['oauth']],
  ['ledger', ['ledger', 'queue']],
  ['page', ['page']],
  ['app', ['app', 'setup']],
]

/**
 * What differs by platform: the `default.ts` / `default.node.ts` pair of each folder listed, as
 * one import per key (package.json `imports`), built to `runtime/<key>.js` and
 * `runtime/<key>.node.js`. The webhook path's pieces share one file; the OpenTelemetry lookup
 * (which loads `node:module`) is apart, so the webhook path does not load it.
 */
const PLATFORM = {
  '#platform': ['crypto', 'platform', 'webhooks/telemetry'],
  '#telemetry/api': ['telemetry/api'],
}
const importOf = (folder) =>
  Object.keys(PLATFORM).find((key) => PLATFORM[key].includes(folder)) ??
  fail(`${folder}/default.js is in no PLATFORM import`)
const runtimeFile = (key) => `runtime/${key.slice(1).replace('/', '-')}`
const fail = (message) => {
  throw new Error(message)
}

/** TypeScript in, JavaScript out, one module at a time; `.js` specifiers resolve to `.ts`. */
function typescript() {
  return {
    name: 'typescript',
    resolveId(source, importer) {
      if (source.startsWith('\0runtime:')) return source
      if (importer === undefined || !source.startsWith('.')) return null
      const target = resolve(dirname(importer), source)
      if (target.endsWith('/default.js')) {
        return { id: importOf(dirname(target).slice(src.length + 1)), external: true }
      }
      return target.replace(/\.js$/, '.ts')
    },
    // A runtime entry (`\0runtime:<key>[.node]`): the folders' default modules of that build.
    load(id) {
      if (!id.startsWith('\0runtime:')) return null
      const [key, build] = id.slice('\0runtime:'.length).split('|')
      const file = build === 'node' ? 'default.node.ts' : 'default.ts'
      return PLATFORM[key].map((folder) => `export * from '${join(src, folder, file)}'\n`).join('')
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

function build() {
  const input = { index: join(src, 'index.ts') }
  for (const name of ENTRIES) input[name] = entry(name)
  for (const key of Object.keys(PLATFORM)) {
    input[runtimeFile(key)] = `\0runtime:${key}|default`
    input[`${runtimeFile(key)}.node`] = `\0runtime:${key}|node`
  }
  const output = {
    dir: 'dist',
    format: 'es',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    manualChunks: layers(),
    sourcemap: true,
    sourcemapExcludeSources: true,
    generatedCode: 'es2015',
    hoistTransitiveImports: false,
  }
  return {
    input,
    external: (id) => id.startsWith('node:') || id.startsWith('#'),
    plugins: [typescript()],
    treeshake: { moduleSideEffects: false },
    // An entry exports its own names only: shared code is imported from a chunk, never from it.
    preserveEntrySignatures: 'strict',
    output,
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

export default build()
