// Fails on an import cycle between the source files of the packages and the internal kits
// (packages/*/src, internal/*/src), type-only imports included: a type cycle is a floor that
// does not run one way, even where it cannot order module evaluation. Also fails when two of
// core's folders import each other (each concern sits on the floors below it), whichever files
// do it. Run by `pnpm lint`.
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

/** The files a source imports, types included (relative specifiers only: packages are not cyclic). */
function imports(file) {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  const out = []
  for (const statement of sf.statements) {
    const isImport = ts.isImportDeclaration(statement)
    const isExport = ts.isExportDeclaration(statement) && statement.moduleSpecifier
    if (!isImport && !isExport) continue
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

const graph = new Map(sources.map((file) => [file, imports(file)]))
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

// Core's floors: a folder under src/ (or a file directly in it) is one unit; the entry files,
// which gather every concern, are left out.
const core = join(root, 'packages/core/src')
const ENTRIES = new Set(['index', 'entries'])
const unitOf = (file) => {
  const [first, ...rest] = relative(core, file).split('/')
  return rest.length > 0 ? first : first.replace(/\.ts$/, '')
}
const folderEdges = new Map()
for (const [file, targets] of graph) {
  if (!file.startsWith(`${core}/`) || ENTRIES.has(unitOf(file))) continue
  for (const target of targets) {
    if (!target.startsWith(`${core}/`) || unitOf(target) === unitOf(file)) continue
    const edge = `${unitOf(file)} -> ${unitOf(target)}`
    if (!folderEdges.has(edge))
      folderEdges.set(edge, `${relative(core, file)} imports ${relative(core, target)}`)
  }
}
const twoWay = [...folderEdges.keys()].filter((edge) => {
  const [a, b] = edge.split(' -> ')
  return a < b && folderEdges.has(`${b} -> ${a}`)
})

if (cycles.length > 0 || twoWay.length > 0) {
  for (const cycle of cycles)
    console.error(`import cycle: ${cycle.map((f) => relative(root, f)).join(' -> ')}`)
  for (const edge of twoWay) {
    const [a, b] = edge.split(' -> ')
    console.error(
      `core folders ${a} and ${b} import each other: ${folderEdges.get(edge)}; ${folderEdges.get(`${b} -> ${a}`)}`,
    )
  }
  process.exit(1)
}
console.log(
  `Import cycles: none among ${sources.length} source files (type imports included); no two core folders import each other.`,
)
