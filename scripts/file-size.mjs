// Rooms of one size: no source file of a published package (packages/*/src, testing kits
// included) over 250 lines. The files still over it are listed below with the length they may
// not grow past; each is to be split by topic, and its line here removed then (the check fails
// on a listed file that fits, so the list stays true). Run by `pnpm lint`.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

const LIMIT = 250
const root = new URL('..', import.meta.url).pathname
/** Files over the limit today, and their length now: none may grow, none may join. */
const OVER = {
  'packages/core/src/ledger/catch-up.ts': 395,
  'packages/core/src/ledger/page.ts': 390,
  'packages/core/src/ledger/replay.ts': 316,
  'packages/core/src/ledger/runs.ts': 306,
}

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* sources(path)
    else if (/\.(ts|mts|mjs|js|lua)$/.test(name)) yield path
  }
}

const problems = []
for (const pkg of readdirSync(join(root, 'packages'))) {
  let src
  try {
    src = sources(join(root, 'packages', pkg, 'src'))
  } catch {
    continue
  }
  for (const path of src) {
    const file = relative(root, path)
    const lines = readFileSync(path, 'utf8').split('\n').length - 1
    const allowed = OVER[file]
    if (allowed === undefined && lines > LIMIT)
      problems.push(`${file}: ${lines} lines (at most ${LIMIT})`)
    if (allowed !== undefined && lines > allowed)
      problems.push(`${file}: ${lines} lines, more than the ${allowed} it had (split it by topic)`)
    if (allowed !== undefined && lines <= LIMIT)
      problems.push(`${file}: ${lines} lines now: take it off the list in scripts/file-size.mjs`)
  }
}
for (const file of Object.keys(OVER))
  if (!statSync(join(root, file), { throwIfNoEntry: false }))
    problems.push(`${file} is gone: take it off the list in scripts/file-size.mjs`)
if (problems.length > 0) {
  console.error(`Source files over ${LIMIT} lines:\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
console.log(
  `File size: every source file within ${LIMIT} lines but ${Object.keys(OVER).length} listed ones, none grown.`,
)
