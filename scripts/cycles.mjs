// Fails on an import cycle between the source files of the packages and the internal kits
// (packages/*/src, internal/*/src), type-only imports included: a type cycle is a floor that
// does not run one way, even where it cannot order module evaluation. Also fails on a cycle of
// any length between the folders of one package's src (a folder, or a file directly in src, is
// one unit), whichever files make it; and when core's imports do not run down the floors of
// CONTRIBUTING.md's table (every unit in it once, each import to a lower floor). Run by
// `pnpm lint`.
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

// The units of a package's src: a folder, or a file directly in it; the entry files, which
// gather every concern, are left out.
const ENTRIES = new Set(['index', 'entries'])
const unitIn = (src, file) => {
  const [first, ...rest] = relative(src, file).split('/')
  return rest.length > 0 ? first : first.replace(/\.(ts|mts|mjs)$/, '')
}

/** The imports between a package's units, each with one import that makes it. */
function unitEdges(src) {
  const edges = new Map()
  for (const [file, targets] of graph) {
    if (!file.startsWith(`${src}/`) || ENTRIES.has(unitIn(src, file))) continue
    const from = unitIn(src, file)
    for (const target of targets) {
      if (!target.startsWith(`${src}/`)) continue
      const to = unitIn(src, target)
      if (to === from || ENTRIES.has(to)) continue
      if (!edges.has(from)) edges.set(from, new Map())
      if (!edges.get(from).has(to))
        edges.get(from).set(to, `${relative(src, file)} imports ${relative(src, target)}`)
    }
  }
  return edges
}

/** The cycles between units, one each (a loop of any length), with the imports that make it. */
function unitCycles(edges) {
  const found = []
  const state = new Map()
  const walk = (unit, path) => {
    state.set(unit, 'open')
    for (const next of edges.get(unit)?.keys() ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next])
      else if (!state.has(next)) walk(next, [...path, next])
    }
    state.set(unit, 'done')
  }
  for (const unit of edges.keys()) if (!state.has(unit)) walk(unit, [unit])
  return found.map((cycle) =>
    cycle
      .slice(0, -1)
      .map((unit, i) => edges.get(unit).get(cycle[i + 1]))
      .join('; '),
  )
}

const folderCycles = []
for (const top of ['packages', 'internal'])
  for (const name of readdirSync(join(root, top))) {
    const src = join(root, top, name, 'src')
    if (!statSync(src, { throwIfNoEntry: false })?.isDirectory()) continue
    for (const cycle of unitCycles(unitEdges(src)))
      folderCycles.push(`${relative(root, src)}: folders in a loop: ${cycle}`)
  }

// Core's floors as CONTRIBUTING.md's table gives them: `| <floor> | <units> | ... |`.
const core = join(root, 'packages/core/src')
const floorOf = new Map()
const tableProblems = []
for (const line of readFileSync(join(root, 'CONTRIBUTING.md'), 'utf8').split('\n')) {
  const row = /^\| (\d+|top) +\| ([^|]+)\|/.exec(line)
  if (row === null) continue
  const floor = row[1] === 'top' ? Number.POSITIVE_INFINITY : Number(row[1])
  for (const [, name] of row[2].matchAll(/`([^`]+)`/g)) {
    const unit = name.replace(/\/$/, '').replace(/\.ts$/, '')
    if (floorOf.has(unit)) tableProblems.push(`${unit} is on two floors of the table`)
    floorOf.set(unit, floor)
  }
}
const coreUnits = readdirSync(core)
  .filter((name) => !name.endsWith('.d.ts'))
  .map((name) => name.replace(/\.ts$/, ''))
for (const unit of coreUnits)
  if (!floorOf.has(unit)) tableProblems.push(`${unit} is in packages/core/src but not in the table`)
for (const unit of floorOf.keys())
  if (!coreUnits.includes(unit)) tableProblems.push(`${unit} is in the table but not in src`)
for (const [from, targets] of unitEdges(core))
  for (const [to, witness] of targets) {
    const [a, b] = [floorOf.get(from), floorOf.get(to)]
    if (a !== undefined && b !== undefined && b >= a)
      tableProblems.push(`${from} (floor ${a}) imports ${to} (floor ${b}): ${witness}`)
  }

if (cycles.length > 0 || folderCycles.length > 0 || tableProblems.length > 0) {
  for (const cycle of cycles)
    console.error(`import cycle: ${cycle.map((f) => relative(root, f)).join(' -> ')}`)
  for (const cycle of folderCycles) console.error(cycle)
  for (const problem of tableProblems)
    console.error(`core's floors (CONTRIBUTING.md's table): ${problem}`)
  process.exit(1)
}
console.log(
  `Import cycles: none among ${sources.length} source files (type imports included), nor between any package's folders; core's ${coreUnits.length - ENTRIES.size} units import down CONTRIBUTING's floors.`,
)
