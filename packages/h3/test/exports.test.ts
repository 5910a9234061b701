// The exact public surface of @scheduling-kit/h3, read from the built declarations: its own
// names and the app-facing names of core every adapter re-exports. Change the list deliberately.
import { fileURLToPath } from 'node:url'
import { ADAPTER_REEXPORTS, exportedNames } from '@scheduling-kit/conformance'
import { expect, it } from 'vitest'

const OWN = [
  'SchedulingOAuthApp',
  'schedulingOAuth',
  'schedulingWebhooks',
  'SchedulingWebhooksMiddleware',
]

it('@scheduling-kit/h3 exports exactly its own names and the shared re-exports', async () => {
  const expected = [...OWN, ...ADAPTER_REEXPORTS].sort()
  for (const file of ['index.d.ts', 'index.d.cts']) {
    const dist = fileURLToPath(new URL(`../dist/${file}`, import.meta.url))
    expect(exportedNames(dist)).toEqual(expected)
  }
  const module = await import('../dist/index.js')
  expect(Object.keys(module).sort()).toEqual(expected.filter((name) => name in module).sort())
})
