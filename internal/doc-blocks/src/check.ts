// Type-checks doc blocks against the built packages, all in one program: each block is a module
// of its own (so two blocks may both declare `app`), given its context's names (context/<name>.ts)
// by an import appended after its code (imports are hoisted; the block's lines keep their
// numbers), less any name the block declares itself. Compiled as a user's project compiles it:
// strict, ES modules, Node's and the DOM's types.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
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

const contextDir = new URL('../context/', import.meta.url).pathname

/** The names a module's top level declares: imports, variables (destructured too), functions, classes. */
export function declaredNames(code: string): Set<string> {
  const file = ts.createSourceFile('block.ts', code, ts.ScriptTarget.ES2022, false)
  const names = new Set<string>()
  const bind = (name: ts.BindingName) => {
    if (ts.isIdentifier(name)) names.add(name.text)
    else
      for (const element of name.elements) if (!ts.isOmittedExpression(element)) bind(element.name)
  }
  for (const statement of file.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause
      if (clause?.name) names.add(clause.name.text)
      const bindings = clause?.namedBindings
      if (bindings && ts.isNamespaceImport(bindings)) names.add(bindings.name.text)
      if (bindings && ts.isNamedImports(bindings))
        for (const element of bindings.elements) names.add(element.name.text)
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) bind(declaration.name)
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isEnumDeclaration(statement)) &&
      statement.name
    ) {
      names.add(statement.name.text)
    }
  }
  return names
}

/** What a context module exports (its `export declare const` names). */
function contextNames(context: string): string[] {
  const code = readFileSync(join(contextDir, `${context}.ts`), 'utf8')
  return [...code.matchAll(/^export declare const (\w+)/gm)].map((m) => m[1]!)
}

/** Checks the blocks; `dir` is where their files are written (inside this package). */
export function checkBlocks(blocks: DocBlock[], dir: string): BlockError[] {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  // The app's own modules the pages import by a relative path (./token-store), and the contexts.
  for (const sub of ['siblings', '.']) {
    for (const name of readdirSync(join(contextDir, sub))) {
      if (name.endsWith('.ts') && !name.endsWith('.d.ts'))
        copyFileSync(join(contextDir, sub, name), join(dir, sub === '.' ? `context-${name}` : name))
    }
  }
  const byFile = new Map<string, DocBlock>()
  const exported = new Map<string, string[]>()
  blocks.forEach((block, i) => {
    const name = join(dir, `block-${i}.ts`)
    const names = exported.get(block.context) ?? contextNames(block.context)
    exported.set(block.context, names)
    const own = declaredNames(block.code)
    const given = names.filter((n) => !own.has(n))
    const context =
      given.length === 0
        ? ''
        : `import { ${given.join(', ')} } from './context-${block.context}.js'\n`
    // `export {}` makes it a module even when it gets nothing: its names are its own.
    writeFileSync(name, `${block.code}\n${context}export {}\n`)
    byFile.set(name, block)
  })
  const roots = [
    ...byFile.keys(),
    join(contextDir, 'modules.d.ts'),
    join(contextDir, 'common.d.ts'),
  ]
  const program = ts.createProgram(roots, OPTIONS)
  const errors: BlockError[] = []
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
    const block = diagnostic.file && byFile.get(diagnostic.file.fileName)
    if (block === undefined || diagnostic.file === undefined || diagnostic.start === undefined) {
      errors.push({ where: diagnostic.file?.fileName ?? 'the contexts', message })
      continue
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
    errors.push({ where: `${block.file}:${block.line + line}`, message })
  }
  return errors
}
