// What importing an entry point loads, in Node, from the published build: the webhook path loads
// its own layer of core and nothing of OAuth, tokens, subscriptions, the ledger or telemetry
// (rollup.config.mjs builds core by layers). Instructions are measured in `pnpm bench`; this
// test keeps what is loaded from growing back.
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { coreFilesLoadedBy, WEBHOOK_PATH_FILES } from '../fixtures/files-loaded.mjs'

const here = fileURLToPath(new URL('.', import.meta.url))

describe('start-up by concern', () => {
  it('core/webhooks loads its facade and the webhook layer, nothing else', () => {
    expect(coreFilesLoadedBy('@scheduling-kit/core/webhooks', here)).toEqual([
      'chunks/webhooks.js',
      'runtime/platform.node.js',
      'webhooks.js',
    ])
  })

  it('core/adapter (what an adapter middleware uses) rides on the same layer', () => {
    expect(coreFilesLoadedBy('@scheduling-kit/core/adapter', here)).toEqual(WEBHOOK_PATH_FILES)
  })

  it('core/lazy (lazyScheduling) rides on the webhook layer too: the rest loads at first use', () => {
    expect(coreFilesLoadedBy('@scheduling-kit/core/lazy', here)).toEqual([
      'chunks/lazy.js',
      'chunks/webhooks.js',
      'lazy.js',
      'runtime/platform.node.js',
    ])
  })

  it('the other concerns load their own layers: the check above can fail', () => {
    const oauth = coreFilesLoadedBy('@scheduling-kit/core/oauth', here)
    expect(oauth).toContain('chunks/oauth.js')
    expect(oauth).toContain('chunks/tokens.js')
    const root = coreFilesLoadedBy('@scheduling-kit/core', here)
    for (const layer of ['webhooks', 'tokens', 'oauth', 'subscriptions', 'ledger', 'telemetry'])
      expect(root, layer).toContain(`chunks/${layer}.js`)
  })
})
