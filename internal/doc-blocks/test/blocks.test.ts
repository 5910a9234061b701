// The extractor: fences, markers and line numbers.
import { describe, expect, it } from 'vitest'
import { blocksOf } from '../src/blocks.js'

describe('blocksOf', () => {
  it('finds ts blocks with their first line, context and skip reason; ignores other languages', () => {
    const page = [
      '# Title', // 1
      '```sh', // 2
      'pnpm test', // 3
      '```', // 4
      '```ts', // 5
      'const a = 1', // 6
      '```', // 7
      '<!-- doc-check: context koa -->', // 8
      '```ts', // 9
      'app.use(x)', // 10
      '```', // 11
      '<!-- doc-check: skip needs a NestJS module -->', // 12
      '```typescript', // 13
      '@Module({})', // 14
      '```', // 15
    ].join('\n')
    expect(blocksOf('p.md', page)).toEqual([
      { file: 'p.md', line: 6, code: 'const a = 1', context: 'express' },
      { file: 'p.md', line: 10, code: 'app.use(x)', context: 'koa' },
      {
        file: 'p.md',
        line: 14,
        code: '@Module({})',
        context: 'express',
        skip: 'needs a NestJS module',
      },
    ])
  })

  it('refuses a malformed marker and an unclosed fence', () => {
    expect(() => blocksOf('p.md', '<!-- doc-check: contxt x -->\n```ts\nx\n```')).toThrow(/marker/)
    expect(() => blocksOf('p.md', '```ts\nx\n')).toThrow(/never closed/)
  })

  it('keeps an indented block (in a list) without its indent', () => {
    expect(blocksOf('p.md', '- item\n  ```ts\n  const b = 2\n  ```')[0]?.code).toBe('const b = 2')
  })
})

describe('declaredNames', () => {
  it('lists what a block declares at its top level, so its context does not give it again', async () => {
    const { declaredNames } = await import('../src/check.js')
    const names = declaredNames(
      [
        "import express, { type Express, Router as R } from 'express'",
        "import * as ns from 'node:fs'",
        'const app = express()',
        'const { a, b: [c] } = x',
        'function f() {}',
        'class K {}',
        'if (y) { const inner = 1 }',
      ].join('\n'),
    )
    expect([...names].sort()).toEqual(['Express', 'K', 'R', 'a', 'app', 'c', 'express', 'f', 'ns'])
  })
})
