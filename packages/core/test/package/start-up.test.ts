// What importing an entry point loads, in Node, from the published build: the webhook path loads
// its own layer of core and nothing of OAuth, tokens, subscriptions, the ledger or telemetry
// (rollup.config.mjs builds core by layers). Instructions are measured in `pnpm bench`; this
// test keeps what is loaded from growing back.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const recorder = fileURLToPath(new URL('../fixtures/loaded-modules.mjs', import.meta.url))
const here = fileURLToPath(new URL('.', import.meta.url))

/** Core's files (under dist/) loaded by `import(specifier)` in a fresh Node process. */
function coreFilesLoadedBy(specifier: string): string[] {
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
    { cwd: here, encoding: 'utf8' },
  )
  expect(run.stderr).toBe('')
  const urls = JSON.parse(run.stdout) as string[]
  return urls
    .map((url) => /\/core\/dist\/(.*)$/.exec(url)?.[1])
    .filter((file): file is string => file !== undefined)
    .map((file) => file.replace(/-[\w-]{8}\.js$/, '.js'))
    .sort()
}

describe('start-up by concern', () => {
  it('core/webhooks loads its facade and the webhook layer, nothing else', () => {
    expect(coreFilesLoadedBy('@scheduling-kit/core/webhooks')).toEqual([
      'chunks/webhooks.node.js',
      'webhooks.node.js',
    ])
  })

  it('core/adapter (what an adapter middleware uses) rides on the same layer', () => {
    expect(coreFilesLoadedBy('@scheduling-kit/core/adapter')).toEqual([
      'adapter.node.js',
      'chunks/webhooks.node.js',
    ])
  })

  it('the other concerns load their own layers: the check above can fail', () => {
    const oauth = coreFilesLoadedBy('@scheduling-kit/core/oauth')
    expect(oauth).toContain('chunks/oauth.node.js')
    expect(oauth).toContain('chunks/tokens.node.js')
    const root = coreFilesLoadedBy('@scheduling-kit/core')
    for (const layer of ['webhooks', 'tokens', 'oauth', 'subscriptions', 'ledger', 'telemetry'])
      expect(root, layer).toContain(`chunks/${layer}.node.js`)
  })
})
