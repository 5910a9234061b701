// The house rule on size: a file holds one topic however long the topic is, and a function
// stays short enough to read at once. Fails on a function, method or arrow function of a
// published package's source (packages/*/src) longer than LIMIT lines, counted from its first
// line to its last. A function that outgrows it is split into the steps it takes, each named.
// Run by `pnpm lint`.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative } from 'node:path'

const LIMIT = 80
const root = new URL('..', import.meta.url).pathname
const ts = createRequire(join(root, 'packages/core/package.json'))('typescript')

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* sources(path)
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) yield path
  }
}

const isFunction = (node) =>
  ts.isFunctionDeclaration(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node)

/** A function's name as a reader finds it: its own, or the binding or property it is given to. */
function nameOf(node) {
  if (node.name) return node.name.getText()
  const parent = node.parent
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)))
    return parent.name.getText()
  return '(anonymous)'
}

const problems = []
let functions = 0
for (const pkg of readdirSync(join(root, 'packages'))) {
  const src = join(root, 'packages', pkg, 'src')
  if (!statSync(src, { throwIfNoEntry: false })?.isDirectory()) continue
  for (const path of sources(src)) {
    const text = readFileSync(path, 'utf8')
    const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
    const visit = (node) => {
      if (isFunction(node) && node.body) {
        functions++
        const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line
        const last = file.getLineAndCharacterOfPosition(node.end).line
        const lines = last - first + 1
        if (lines > LIMIT)
          problems.push(`${relative(root, path)}:${first + 1} ${nameOf(node)}: ${lines} lines`)
      }
      ts.forEachChild(node, visit)
    }
    visit(file)
  }
}
if (problems.length > 0) {
  console.error(
    `Functions over ${LIMIT} lines (split them into the steps they take):\n  ${problems.join('\n  ')}`,
  )
  process.exit(1)
}
console.log(`Function size: all ${functions} functions within ${LIMIT} lines.`)
