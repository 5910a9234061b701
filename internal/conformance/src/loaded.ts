// What importing a package's entry point loads in a fresh Node process, for the adapters'
// start-up tests: core's test fixture files-loaded.mjs (packages/core/test/fixtures/), which
// core's own start-up test uses too.
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { expect } from 'vitest'
import { exportedNames } from './exports.js'

const coreDir = dirname(fileURLToPath(import.meta.resolve('@scheduling-kit/core/package.json')))
const fixture = pathToFileURL(join(coreDir, 'test', 'fixtures', 'files-loaded.mjs')).href
export const { coreFilesLoadedBy, WEBHOOK_PATH_FILES } = (await import(
  fixture
)) as typeof import('../../../packages/core/test/fixtures/files-loaded.mjs')

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
