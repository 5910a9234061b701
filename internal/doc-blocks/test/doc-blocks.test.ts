// Every `ts` block of every README and docs/ page compiles against the built packages, in the
// context its marker names (context/<name>.d.ts declares what the page leaves to the reader).
// A block that cannot compile here says why with a skip marker, printed below.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { blocksOf, type DocBlock, pages } from '../src/blocks.js'
import { checkBlocks } from '../src/check.js'

const root = new URL('../../../', import.meta.url).pathname
const all: DocBlock[] = pages(root).flatMap((page) =>
  blocksOf(page, readFileSync(join(root, page), 'utf8')),
)
const contexts = [...new Set(all.filter((b) => b.skip === undefined).map((b) => b.context))]

describe('doc blocks', () => {
  it('are found, and every skipped one says why', () => {
    expect(all.length).toBeGreaterThan(40)
    const skipped = all.filter((b) => b.skip !== undefined)
    for (const block of skipped) expect(block.skip, `${block.file}:${block.line}`).not.toBe('')
    console.log(
      `${all.length} ts blocks in ${new Set(all.map((b) => b.file)).size} pages; ${skipped.length} skipped:\n` +
        skipped.map((b) => `  ${b.file}:${b.line}: ${b.skip}`).join('\n'),
    )
  })

  it('name contexts that exist', () => {
    for (const context of contexts)
      expect(existsSync(new URL(`../context/${context}.ts`, import.meta.url)), context).toBe(true)
  })

  it(`compile, each in its context (${contexts.join(', ')})`, () => {
    const blocks = all.filter((b) => b.skip === undefined)
    const errors = checkBlocks(blocks, join(root, 'internal/doc-blocks/.blocks'))
    expect(errors.map((e) => `${e.where}: ${e.message}`)).toEqual([])
  })
})
