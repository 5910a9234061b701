// ReDoS check, part of `pnpm lint`: every regular expression in packages/*/src (literals, and
// `new RegExp` / `RegExp` with literal arguments) goes through recheck, which decides whether
// its backtracking is linear for every input. A pattern recheck finds polynomial or
// exponential, or cannot decide, fails the lint with its attack string's shape. A RegExp built
// from something other than literals fails too: it cannot be checked here.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { checkSync } from 'recheck'
import ts from 'typescript'

const root = new URL('..', import.meta.url).pathname

function* sourceFiles(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* sourceFiles(path)
    else if (/\.(m|c)?tsx?$/.test(name) && !name.endsWith('.d.ts')) yield path
  }
}

/** Every regular expression of a file: `{ source, flags, line }`, or `{ dynamic, line }`. */
function regexesOf(path) {
  const text = readFileSync(path, 'utf8')
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const found = []
  const lineOf = (node) => file.getLineAndCharacterOfPosition(node.getStart()).line + 1
  const visit = (node) => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = node.getText()
      const end = literal.lastIndexOf('/')
      found.push({
        source: literal.slice(1, end),
        flags: literal.slice(end + 1),
        line: lineOf(node),
      })
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'RegExp'
    ) {
      const [pattern, flags] = node.arguments ?? []
      const literal = (arg) => arg === undefined || ts.isStringLiteralLike(arg)
      if (pattern !== undefined && ts.isStringLiteralLike(pattern) && literal(flags)) {
        found.push({ source: pattern.text, flags: flags?.text ?? '', line: lineOf(node) })
      } else found.push({ dynamic: true, line: lineOf(node) })
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

const packages = join(root, 'packages')
let checked = 0
const failures = []
for (const pkg of readdirSync(packages)) {
  const src = join(packages, pkg, 'src')
  if (!statSync(src, { throwIfNoEntry: false })?.isDirectory()) continue
  for (const path of sourceFiles(src)) {
    for (const regex of regexesOf(path)) {
      const where = `${relative(root, path)}:${regex.line}`
      if (regex.dynamic) {
        failures.push(
          `${where}: a RegExp built at run time cannot be checked; write it as a literal`,
        )
        continue
      }
      checked++
      const result = checkSync(regex.source, regex.flags, { timeout: 10_000 })
      if (result.status !== 'safe') {
        const complexity = result.complexity ? ` (${result.complexity.summary})` : ''
        const attack = result.attack ? `; attack: ${JSON.stringify(result.attack.pattern)}` : ''
        const reason = result.error ? `; ${result.error.kind}` : ''
        failures.push(
          `${where}: /${regex.source}/${regex.flags} is ${result.status}${complexity}${attack}${reason}`,
        )
      }
    }
  }
}

if (failures.length > 0) {
  console.error(`ReDoS check: ${failures.length} of ${checked} regular expressions fail:`)
  for (const failure of failures) console.error(`  ${failure}`)
  process.exit(1)
}
console.log(`ReDoS check: ${checked} regular expressions in packages/*/src, all linear (recheck).`)
