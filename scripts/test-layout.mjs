// Tests mirror the sources: in every package, each folder under test/ is named after a folder
// under src/ (test/api for src/api), but for fixtures/ (what tests run) and package/ (the built
// package as published). Run by `pnpm lint`.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const OWN = new Set(['fixtures', 'package'])
const folders = (dir) =>
  existsSync(dir) ? readdirSync(dir).filter((name) => statSync(join(dir, name)).isDirectory()) : []
const wrong = []
for (const name of readdirSync(join(root, 'packages'))) {
  const dir = join(root, 'packages', name)
  const sources = new Set(folders(join(dir, 'src')))
  for (const folder of folders(join(dir, 'test'))) {
    if (!OWN.has(folder) && !sources.has(folder)) wrong.push(`packages/${name}/test/${folder}`)
  }
}
if (wrong.length > 0) {
  console.error(`Test folders with no source folder of that name:\n  ${wrong.join('\n  ')}`)
  process.exit(1)
}
console.log('Test layout: every test folder mirrors a source folder.')
