// What an app pays in bytes for what it imports, as its bundler would build it: esbuild bundles
// an app's one import from the published build (dist/, through the package's exports map, the
// node or the default condition), minified, and the test gzips it. A budget is a ceiling: past
// it, something rode along that the import does not need. Figures move in bench/RESULTS.md.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import { afterAll, describe, expect, it } from 'vitest'

const packageDir = fileURLToPath(new URL('../..', import.meta.url))
// An app directory with the package installed: what a user's bundler resolves.
const app = mkdtempSync(join(tmpdir(), 'bundle-size-'))
mkdirSync(join(app, 'node_modules', '@scheduling-kit'), { recursive: true })
symlinkSync(packageDir, join(app, 'node_modules', '@scheduling-kit', 'core'), 'dir')
afterAll(() => rmSync(app, { recursive: true, force: true }))

/** min+gzip bytes of an app whose only code is `source`, for `platform`'s export condition. */
async function bundled(source: string, platform: 'node' | 'browser'): Promise<number> {
  const entry = join(app, `entry-${platform}-${Math.random().toString(36).slice(2)}.js`)
  writeFileSync(entry, source)
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: 'esm',
    platform,
    write: false,
    external: ['@opentelemetry/api', 'node:*'],
    logLevel: 'error',
  })
  return gzipSync(result.outputFiles[0]!.contents).length
}

// Ceilings in bytes (min+gzip). verifySignature: 1 kB in both builds. The webhook handler: the
// default (Web) build carries no telemetry unless the app calls useOpenTelemetry (it measured
// 11.5 kB); the node build keeps its telemetry at hand, unloaded until an SDK registers (13.9 kB).
// The ledger's code comes with the ledger object: the handler carries only its 0.3 kB of glue.
// The record every delivery goes through (claims/record.ts, the dedupe claim as one of its two
// kinds) added 49 B to the handler, the ledger branch it replaced counted.
// Core's build by layers (rollup.config.mjs) puts the webhook path in one chunk: a bundler keeps
// what it cannot prove unused there statement by statement (the handler's web build measured
// 11,710 B, +50 B). The node build loads its delivery telemetry by a dynamic import now, so Node
// starts without it; a bundler inlines the whole module for that import (15,327 B, +1,277 B).
// One build for every runtime, the platform's pieces behind package.json `imports` (#platform):
// the node bundle measured 15,363 B (+36 B), the web one unchanged. The handler's Fetch face in a
// module of its own (webhooks/fetch.ts): the web bundle 11,723 B (+3 B); with `sleep` guarding a
// negative delay (Node 24 warns on one), the node bundle 15,383 B (+20 B).
const BUDGETS = {
  verifySignature: { node: 1_024, browser: 1_024 },
  createWebhookHandler: { node: 15_400, browser: 11_740 },
} as const

describe('bytes an app pays for one import', () => {
  for (const [name, budget] of Object.entries(BUDGETS)) {
    for (const platform of ['node', 'browser'] as const) {
      it(`${name} (${platform} build) stays within ${budget[platform]} bytes min+gzip`, async () => {
        const size = await bundled(`export { ${name} } from '@scheduling-kit/core'\n`, platform)
        expect(size).toBeGreaterThan(200) // something was bundled
        expect(size).toBeLessThanOrEqual(budget[platform])
      })
    }
  }

  it('the Web build of the handler carries no telemetry; useOpenTelemetry brings it', async () => {
    const without = await bundled(
      `export { createWebhookHandler } from '@scheduling-kit/core'\n`,
      'browser',
    )
    const withTelemetry = await bundled(
      `export { createWebhookHandler, useOpenTelemetry } from '@scheduling-kit/core'\n`,
      'browser',
    )
    // The spans, metrics and their attributes: several kB, all of it behind the one call.
    expect(withTelemetry - without).toBeGreaterThan(1_500)
  })

  it('the ledger comes with createDeliveryLedger: a handler without one carries none of it', async () => {
    const without = await bundled(
      `export { createWebhookHandler } from '@scheduling-kit/core'\n`,
      'browser',
    )
    const withLedger = await bundled(
      `export { createWebhookHandler, createDeliveryLedger, MemoryLedgerStore } from '@scheduling-kit/core'\n`,
      'browser',
    )
    // The state machine, the ordering guard, replay and the memory store: all behind the import.
    expect(withLedger - without).toBeGreaterThan(2_000)
  })
})
