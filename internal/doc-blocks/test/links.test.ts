// The docs as an index: every relative link between pages lands on a file and a heading, and
// the root README stays an index a newcomer reads in minutes.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { pages } from '../src/blocks.js'
import { anchorsOf, brokenLinks } from '../src/links.js'

const root = new URL('../../../', import.meta.url).pathname

describe('links between the docs', () => {
  it('every relative link names a file that exists and a heading it has', () => {
    expect(brokenLinks(root, [...pages(root), 'CONTRIBUTING.md'])).toEqual([])
  })

  it('anchors follow the headings: punctuation dropped, repeats numbered, fences ignored', () => {
    const anchors = anchorsOf('# A `b`, c!\n## Usage\n```\n# not\n```\n## Usage\n')
    expect([...anchors]).toEqual(['a-b-c', 'usage', 'usage-1'])
  })

  it('the root README is an index: at most 250 lines, the install line first among its commands', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8')
    expect(readme.split('\n').length).toBeLessThanOrEqual(250)
    const firstCommand = /```sh\n(.*)\n/.exec(readme)?.[1] ?? ''
    expect(firstCommand).toMatch(/^npm install @scheduling-kit\/express/)
  })
})
