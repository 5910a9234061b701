// Type-checks doc blocks against the built packages: each block is a module of its own (so two
// blocks may both declare `app`), compiled with its context's declarations, as a user's
// project compiles it: strict, ES modules, Node's and the DOM's types.
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import type { DocBlock } from './blocks.js'

export interface BlockError {
  /** `page:line` of the error in the Markdown page. */
  where: string
  message: string
}

const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
  types: ['node'],
  strict: true,
  esModuleInterop: true,
  skipLibCheck: true,
  noEmit: true,
  resolveJsonModule: true,
}

/** Checks the blocks of one context; `dir` is where their files are written (inside this package). */
export function checkBlocks(blocks: DocBlock[], context: string, dir: string): BlockError[] {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const byFile = new Map<string, DocBlock>()
  blocks.forEach((block, i) => {
    const name = join(dir, `block-${i}.ts`)
    // `export {}` makes it a module: its names are its own.
    writeFileSync(name, `${block.code}\nexport {}\n`)
    byFile.set(name, block)
  })
  const contextDir = new URL('../context/', import.meta.url).pathname
  // The app's own modules the pages import by a relative path (./token-store).
  const siblings = join(contextDir, 'siblings')
  for (const name of readdirSync(siblings)) copyFileSync(join(siblings, name), join(dir, name))
  const roots = [
    ...byFile.keys(),
    join(contextDir, 'modules.d.ts'),
    join(contextDir, 'common.d.ts'),
    join(contextDir, `${context}.d.ts`),
  ]
  const program = ts.createProgram(roots, OPTIONS)
  const errors: BlockError[] = []
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
    const block = diagnostic.file && byFile.get(diagnostic.file.fileName)
    if (block === undefined || diagnostic.file === undefined || diagnostic.start === undefined) {
      errors.push({ where: diagnostic.file?.fileName ?? `context ${context}`, message })
      continue
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
    errors.push({ where: `${block.file}:${block.line + line}`, message })
  }
  return errors
}
