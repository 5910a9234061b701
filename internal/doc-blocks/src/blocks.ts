// The `ts` blocks of the project's Markdown pages, with the marker each may carry on the line
// before its fence:
//   <!-- doc-check: context <name> -->  compile with the declarations of context/<name>.d.ts
//   <!-- doc-check: skip <reason> -->   not compiled; the reason is printed
// A block with no marker compiles in the `express` context (the pages' usual framework).
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

export interface DocBlock {
  /** The page, relative to the repository root. */
  file: string
  /** The line of the block's first code line in the page (1-based). */
  line: number
  code: string
  context: string
  /** Why the block is not compiled, when it is not. */
  skip?: string
}

const MARKER = /^<!--\s*doc-check:\s*(context|skip)\s+(.*?)\s*-->$/

/** The blocks of one page. Throws on a malformed marker or an unclosed fence. */
export function blocksOf(file: string, text: string): DocBlock[] {
  const lines = text.split('\n')
  const blocks: DocBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)(```+|~~~+)(\S*)/.exec(lines[i]!)
    if (fence === null) continue
    const [, indent, mark, lang] = fence
    let end = i + 1
    while (end < lines.length && !lines[end]!.trimStart().startsWith(mark!)) end++
    if (end >= lines.length) throw new Error(`${file}:${i + 1}: a code fence is never closed`)
    if (lang === 'ts' || lang === 'typescript') {
      const before = lines[i - 1]?.trim() ?? ''
      const marker = MARKER.exec(before)
      if (before.startsWith('<!-- doc-check') && marker === null)
        throw new Error(
          `${file}:${i}: a doc-check marker must be "context <name>" or "skip <reason>"`,
        )
      const code = lines
        .slice(i + 1, end)
        .map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l))
        .join('\n')
      blocks.push({
        file,
        line: i + 2,
        code,
        context: marker?.[1] === 'context' ? marker[2]! : 'express',
        ...(marker?.[1] === 'skip' ? { skip: marker[2]! } : {}),
      })
    }
    i = end
  }
  return blocks
}

/** The pages checked: the root README, docs/, and every package's and example's README. */
export function pages(root: string): string[] {
  const found = [join(root, 'README.md')]
  const docs = join(root, 'docs')
  for (const name of readdirSync(docs)) if (name.endsWith('.md')) found.push(join(docs, name))
  for (const dir of ['packages', 'examples']) {
    for (const name of readdirSync(join(root, dir))) {
      const readme = join(root, dir, name, 'README.md')
      try {
        readFileSync(readme)
        found.push(readme)
      } catch {
        // No README in this one.
      }
    }
  }
  return found.map((path) => relative(root, path))
}
