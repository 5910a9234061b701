// Rooms of one size: no source file of a published package (packages/*/src, testing kits and
// Lua scripts included) over 250 lines. A file that outgrows it is split by topic, never by
// size. Run by `pnpm lint`.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

const LIMIT = 250
const root = new URL('..', import.meta.url).pathname

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* sources(path)
    else if (/\.(ts|mts|mjs|js|lua)$/.test(name)) yield path
  }
}

const problems = []
let files = 0
for (const pkg of readdirSync(join(root, 'packages'))) {
  const src = join(root, 'packages', pkg, 'src')
  if (!statSync(src, { throwIfNoEntry: false })?.isDirectory()) continue
  for (const path of sources(src)) {
    files++
    const lines = readFileSync(path, 'utf8').split('\n').length - 1
    if (lines > LIMIT) problems.push(`${relative(root, path)}: ${lines} lines (at most ${LIMIT})`)
  }
}
if (problems.length > 0) {
  console.error(
    `Source files over ${LIMIT} lines (split them by topic):\n  ${problems.join('\n  ')}`,
  )
  process.exit(1)
}
console.log(`File size: all ${files} source files within ${LIMIT} lines.`)
