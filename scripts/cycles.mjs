// Fails on an import cycle between the source files of the packages and the internal kits
// (packages/*/src, internal/*/src): value imports only, since `import type` is erased and
// cannot order module evaluation. Run by `pnpm lint`.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'

const root = resolve(new URL('..', import.meta.url).pathname)
const ts = createRequire(join(root, 'packages/core/package.json'))('typescript')

function files(dir) {
  const out = []
  for (const name of readdirSync(dir)) {
    const full = join(dir, name)
    if (statSync(full).isDirectory()) out.push(...files(full))
    else if (/\.(ts|mts|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(full)
  }
  return out
}

const sources = ['packages', 'internal'].flatMap((top) =>
  readdirSync(join(root, top))
    .map((name) => join(root, top, name, 'src'))
    .filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    .flatMap(files),
)

/** The files a source imports at run time (relative specifiers only: packages are not cyclic). */
function valueImports(file) {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  const out = []
  for (const statement of sf.statements) {
    const isImport = ts.isImportDeclaration(statement)
    const isExport = ts.isExportDeclaration(statement) && statement.moduleSpecifier
    if (!isImport && !isExport) continue
    if (isImport) {
      const clause = statement.importClause
      const named = clause?.namedBindings
      const typeOnly =
        clause?.isTypeOnly ||
        (clause &&
          !clause.name &&
          named &&
          ts.isNamedImports(named) &&
          named.elements.length > 0 &&
          named.elements.every((e) => e.isTypeOnly))
      if (typeOnly) continue
    } else if (statement.isTypeOnly) continue
    const spec = statement.moduleSpecifier.text
    if (!spec.startsWith('.')) continue
    const target = resolve(dirname(file), spec).replace(/\.js$/, '')
    const found = ['.ts', '.mts', '.mjs', '']
      .map((ext) => target + ext)
      .find((f) => sources.includes(f))
    if (found) out.push(found)
  }
  return out
}

const graph = new Map(sources.map((file) => [file, valueImports(file)]))
const cycles = []
const state = new Map()
function visit(file, path) {
  state.set(file, 'open')
  for (const next of graph.get(file) ?? []) {
    if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next])
    else if (!state.has(next)) visit(next, [...path, next])
  }
  state.set(file, 'done')
}
for (const file of sources) if (!state.has(file)) visit(file, [file])

if (cycles.length > 0) {
  for (const cycle of cycles)
    console.error(`import cycle: ${cycle.map((f) => relative(root, f)).join(' -> ')}`)
  process.exit(1)
}
console.log(`Import cycles: none among ${sources.length} source files (value imports).`)
