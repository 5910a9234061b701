// The status-code table is written once, in packages/core/README.md between
// `<!-- status-table -->` and `<!-- /status-table -->`, and copied into every README that shows
// it (between the generated markers). `node scripts/status-table.mjs` writes the copies;
// `--check` exits 1 when one differs. packages/core/test/errors/status-table.test.ts checks the table
// against the code and the copies against the table.
import { readFileSync, writeFileSync } from 'node:fs'

const root = new URL('..', import.meta.url).pathname
export const START =
  '<!-- status-table: generated from packages/core/README.md by scripts/status-table.mjs -->'
export const END = '<!-- /status-table -->'
export const COPIES = [
  'docs/receive-webhooks.md',
  'packages/express/README.md',
  'packages/koa/README.md',
  'packages/fastify/README.md',
  'packages/h3/README.md',
]

/** The table as core's README has it. */
export function canonicalTable() {
  const core = readFileSync(`${root}packages/core/README.md`, 'utf8')
  const start = core.indexOf('<!-- status-table -->\n')
  const end = core.indexOf(END, start)
  if (start < 0 || end < 0) throw new Error('packages/core/README.md has no status-table markers')
  return core.slice(start + '<!-- status-table -->\n'.length, end).trimEnd()
}

/** A README's copy of the table, or `undefined` when it has no generated markers. */
export function copyIn(text) {
  const start = text.indexOf(`${START}\n`)
  const end = text.indexOf(END, start)
  if (start < 0 || end < 0) return undefined
  return text.slice(start + START.length + 1, end).trimEnd()
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const table = canonicalTable()
  const check = process.argv.includes('--check')
  let stale = 0
  for (const file of COPIES) {
    const text = readFileSync(`${root}${file}`, 'utf8')
    const copy = copyIn(text)
    if (copy === undefined) throw new Error(`${file} has no generated status-table markers`)
    if (copy === table) continue
    stale++
    if (check) console.error(`${file}: the status-code table differs from core's`)
    else writeFileSync(`${root}${file}`, text.replace(`${START}\n${copy}`, `${START}\n${table}`))
  }
  if (check && stale > 0) process.exit(1)
  if (!check) console.log(`status-code table: ${stale} of ${COPIES.length} copies rewritten`)
}
