// Bytes an app bundles for what it imports: esbuild bundles an app whose only code is one
// import, minified, then gzip (as core's bundle-size test does, which keeps the budgets). The
// anchor, in the same run with the same settings: octokit's webhooks with its middleware (the
// Node one on the node build, the Web one on the Web build). Sizes do not vary between runs:
// no spread to print. "at start": what core loads by a dynamic import (replay and catch-up)
// left out, as Node loads it and as a bundler that splits at dynamic imports fetches it.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import type { Target } from './harness.js'

const core = fileURLToPath(new URL('../../packages/core', import.meta.url))
const octokit = fileURLToPath(new URL('../node_modules/@octokit/webhooks', import.meta.url))

type Platform = 'browser' | 'node'

async function bytesOf(
  app: string,
  source: string,
  platform: Platform,
  atStart = false,
): Promise<number> {
  const entry = join(app, `entry-${Math.random().toString(36).slice(2)}.js`)
  writeFileSync(entry, source)
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: 'esm',
    platform,
    write: false,
    external: [
      '@opentelemetry/api',
      'node:*',
      ...(atStart ? ['./handler-source-*', './replay-*'] : []),
    ],
    logLevel: 'error',
  })
  return gzipSync(result.outputFiles[0]!.contents).length
}

/** The limits (min+gzip bytes) for the webhook-only handler with a static secret. */
const HANDLER_LIMIT: Record<Platform, number> = { browser: 6_000, node: 7_000 }
/** The limit for the ledger at start, over the handler. */
const LEDGER_LIMIT = 3_000
/** Issue 62's limits for a composed webhook-only app on the Web build, without and with dedupe. */
const COMPOSED_LIMIT = { bare: 5_600, dedupe: 7_000 }

/** A webhook-only app on a Fetch runtime, composed from @scheduling-kit/core/compose. */
const composedApp = (dedupe: boolean) => `
import { MemoryDedupeStore } from '@scheduling-kit/core/webhooks'
import { checkSignature, composeWebhooks, dedupe, handlers, parseEvent, readFetchBody } from '@scheduling-kit/core/compose'
export default composeWebhooks({ parts: [
  readFetchBody(), checkSignature('whsec'), parseEvent(),
  ${dedupe ? 'dedupe(new MemoryDedupeStore()),' : ''}
  handlers({ 'event.created': (event) => console.log(event.id) }),
] })
`

export async function bytesBench(): Promise<Target[]> {
  const app = mkdtempSync(join(tmpdir(), 'sk-bench-bytes-'))
  mkdirSync(join(app, 'node_modules', '@scheduling-kit'), { recursive: true })
  mkdirSync(join(app, 'node_modules', '@octokit'), { recursive: true })
  symlinkSync(core, join(app, 'node_modules', '@scheduling-kit', 'core'), 'dir')
  symlinkSync(octokit, join(app, 'node_modules', '@octokit', 'webhooks'), 'dir')
  const targets: Target[] = []
  try {
    const from = (names: string, entry = '') =>
      `export { ${names} } from '@scheduling-kit/core${entry}'\n`
    console.log('\nBytes an app bundles, min+gzip (esbuild, one import each)')
    console.log('| import | Web build | node build |')
    console.log('|---|---:|---:|')
    const row = async (what: string, source: string, atStart = false) => {
      const sizes = {
        browser: await bytesOf(app, source, 'browser', atStart),
        node: await bytesOf(app, source, 'node', atStart),
      }
      console.log(
        `| ${what} | ${sizes.browser.toLocaleString('en-US')} | ${sizes.node.toLocaleString('en-US')} |`,
      )
      return sizes
    }
    const anchor = {
      browser: await bytesOf(
        app,
        "export { Webhooks, createWebMiddleware } from '@octokit/webhooks'\n",
        'browser',
      ),
      node: await bytesOf(
        app,
        "export { Webhooks, createNodeMiddleware } from '@octokit/webhooks'\n",
        'node',
      ),
    }
    console.log(
      `| anchor: @octokit/webhooks \`Webhooks\` + its middleware (Web / Node) | ${anchor.browser.toLocaleString('en-US')} | ${anchor.node.toLocaleString('en-US')} |`,
    )
    const handler = await row('`createWebhookHandler` (root)', from('createWebhookHandler'))
    await row('`createWebhookHandler` (`/webhooks`)', from('createWebhookHandler', '/webhooks'))
    const handlerAtStart = await row(
      '`createWebhookHandler`, at start',
      from('createWebhookHandler'),
      true,
    )
    const ledger = await row(
      '+ `createDeliveryLedger`, at start',
      from('createWebhookHandler, createDeliveryLedger'),
      true,
    )
    await row(
      '+ `createDeliveryLedger`, `MemoryLedgerStore`, at start',
      from('createWebhookHandler, createDeliveryLedger, MemoryLedgerStore'),
      true,
    )
    await row(
      '+ `createDeliveryLedger`, replay and catch-up inlined',
      from('createWebhookHandler, createDeliveryLedger'),
    )
    await row(
      '+ `createDeliveryLedger`, `createDeliveryPage`, inlined',
      from('createWebhookHandler, createDeliveryLedger, createDeliveryPage'),
    )
    const bare = await row(
      'composed: `readFetchBody`, `checkSignature`, `parseEvent`, `handlers`',
      composedApp(false),
    )
    const deduped = await row('composed, + `dedupe(new MemoryDedupeStore())`', composedApp(true))
    targets.push(
      {
        what: `bytes: composed webhook-only app, Web build (anchor octokit ${anchor.browser} B)`,
        ratio: bare.browser,
        limit: COMPOSED_LIMIT.bare,
        kind: 'max',
        unit: ' B',
      },
      {
        what: `bytes: composed webhook-only app with the memory dedupe, Web build (anchor octokit ${anchor.browser} B)`,
        ratio: deduped.browser,
        limit: COMPOSED_LIMIT.dedupe,
        kind: 'max',
        unit: ' B',
      },
    )
    for (const platform of ['browser', 'node'] as const) {
      const name = platform === 'browser' ? 'Web' : 'node'
      targets.push({
        what: `bytes: webhook-only handler, ${name} build (anchor octokit ${anchor[platform]} B)`,
        ratio: handler[platform],
        limit: HANDLER_LIMIT[platform],
        kind: 'max',
        unit: ' B',
      })
    }
    targets.push({
      what: 'bytes: the ledger at start over the handler, Web build',
      ratio: ledger.browser - handlerAtStart.browser,
      limit: LEDGER_LIMIT,
      kind: 'max',
      unit: ' B',
    })
  } finally {
    rmSync(app, { recursive: true, force: true })
  }
  return targets
}
