// What importing a package's entry point loads in a fresh Node process, for the adapters'
// start-up tests: core's files (under its dist/), with the chunks' hashes taken off. The
// recorder is core's own test fixture (packages/core/test/fixtures/loaded-modules.mjs).
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import { exportedNames } from './exports.js'

const coreDir = dirname(fileURLToPath(import.meta.resolve('@scheduling-kit/core/package.json')))
const recorder = join(coreDir, 'test', 'fixtures', 'loaded-modules.mjs')

/** Core's files loaded by `import(specifier)` resolved from `cwd`, sorted, or the child's error. */
export function coreFilesLoadedBy(specifier: string, cwd: string): string[] {
  const run = spawnSync(
    process.execPath,
    [
      '--import',
      recorder,
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(specifier)})
await new Promise((resolve) => setTimeout(resolve, 50))
process.stdout.write(JSON.stringify(globalThis.loadedModules))`,
    ],
    { cwd, encoding: 'utf8' },
  )
  if (run.status !== 0 || run.stderr !== '') throw new Error(`import(${specifier}): ${run.stderr}`)
  return (JSON.parse(run.stdout) as string[])
    .map((url) => /\/core\/dist\/(.*)$/.exec(url)?.[1])
    .filter((file): file is string => file !== undefined)
    .map((file) => file.replace(/-[\w-]{8}\.js$/, '.js'))
    .sort()
}

/** Core's files a webhook-only app loads through an adapter: the adapter kit and the webhook layer. */
export const WEBHOOK_PATH_FILES = ['adapter.node.js', 'chunks/webhooks.node.js']

/**
 * An adapter's `/webhooks` entry: the middleware (`values`) and its types, and importing it
 * loads of core only the adapter kit and the webhook layer.
 */
export async function expectWebhooksEntry(
  name: string,
  dist: URL,
  values: readonly string[],
  types: readonly string[],
): Promise<void> {
  const module = (await import(new URL('webhooks.js', dist).href)) as object
  expect(Object.keys(module).sort()).toEqual([...values].sort())
  const declared = exportedNames(fileURLToPath(new URL('webhooks.d.ts', dist)))
  expect(declared).toEqual([...values, ...types].sort())
  expect(coreFilesLoadedBy(`${name}/webhooks`, fileURLToPath(dist))).toEqual(WEBHOOK_PATH_FILES)
}
