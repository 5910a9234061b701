// ESM only, required from CommonJS: a CommonJS project with every published package packed and
// installed (test/project.ts) require()s each entry point of each package on Node 22.12.0 (the
// oldest supported: require() of an ES module is on by default from there), 24 and 26, and
// gets the very values import() gives. The packages ship no CommonJS build.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runtimeBinaries } from '@scheduling-kit/runtime-binaries'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commonJsProject, type Project, PUBLISHED } from './project.js'
import { runJson } from './run.js'

interface Consumed {
  node: string
  entries: Record<string, { names: string[]; same: boolean; resolved: string }>
  delivery: { status: number; seen: string[] }
}

const workspace = new URL('../../../', import.meta.url).pathname
const binaries = await runtimeBinaries()
let project: Project
beforeAll(() => {
  project = commonJsProject()
})
afterAll(() => project?.remove())

/** Every entry point the packages' exports maps name, as `@scheduling-kit/<name><subpath>`. */
const ENTRY_POINTS = PUBLISHED.flatMap((name) => {
  const manifest = JSON.parse(
    readFileSync(join(workspace, 'packages', name, 'package.json'), 'utf8'),
  ) as { exports: Record<string, unknown> }
  return Object.keys(manifest.exports)
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => `@scheduling-kit/${name}${subpath.slice(1)}`)
}).sort()

describe.each(['node22', 'node24', 'node26'] as const)('require() on %s', (id) => {
  it('gives every entry point of every package, the same values as import(), from the ESM files', async () => {
    const binary = binaries[id]
    if (binary.path === undefined) throw new Error(`${id}: ${binary.unavailable ?? binary.missing}`)
    const { result, stderr } = await runJson<Consumed>(
      binary.path,
      ['consumer.cjs', JSON.stringify(PUBLISHED)],
      // NODE_PATH would let a package resolve what it does not declare.
      { cwd: project.dir, env: { NODE_PATH: '' } },
    )
    expect(result.node).toBe(`v${binary.version}`)
    expect(Object.keys(result.entries).sort()).toEqual(ENTRY_POINTS)
    for (const [specifier, entry] of Object.entries(result.entries)) {
      expect(entry.names.length, specifier).toBeGreaterThan(0)
      expect(entry.same, specifier).toBe(true)
      expect(entry.resolved, specifier).toMatch(/\.js$/)
      expect(entry.resolved, specifier).not.toMatch(/\.cjs$/)
    }
    expect(result.entries['@scheduling-kit/core']?.names).toContain('createWebhookHandler')
    expect(result.entries['@scheduling-kit/express']?.names).toContain('schedulingWebhooks')
    expect(result.delivery).toEqual({ status: 200, seen: ['payload_consumer'] })
    // Node 22.12 notes that require() of an ES module is experimental; nothing else is said.
    const said = stderr.split('\n').filter((line) => line.trim() !== '')
    const notes = said.filter((line) =>
      /ExperimentalWarning|ES Module in require|--trace-warnings/.test(line),
    )
    expect(said.filter((line) => !notes.includes(line))).toEqual([])
    if (id !== 'node22') expect(notes).toEqual([])
  })
})
