// The package as published: resolved by name through its exports map, imported or required
// (ESM only: Node 22.12+ requires an ES module), with its platform file chosen by its imports map.
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import { sign } from '../helpers.js'

const require = createRequire(import.meta.url)
const packageDir = fileURLToPath(new URL('../../', import.meta.url))
const inDist = createRequire(join(packageDir, 'dist', 'index.js'))

type Core = typeof import('@scheduling-kit/core')
interface Platform {
  defaultProvider: import('../../src/crypto/provider.js').HmacProvider
}
/** One of the built platform files (dist/runtime/): the Web one or the node one. */
const platform = async (file: 'platform.js' | 'platform.node.js') =>
  (await import(new URL(`../../dist/runtime/${file}`, import.meta.url).href)) as Platform

describe('published entry points', () => {
  it('one build: the same file imported and required; the node platform file under the node condition', () => {
    expect(require.resolve('@scheduling-kit/core')).toMatch(/dist[\\/]index\.js$/)
    expect(import.meta.resolve('@scheduling-kit/core')).toMatch(/dist\/index\.js$/)
    expect(inDist.resolve('#platform')).toMatch(/dist[\\/]runtime[\\/]platform\.node\.js$/)
    expect(inDist.resolve('#telemetry/api')).toMatch(
      /dist[\\/]runtime[\\/]telemetry-api\.node\.js$/,
    )
  })

  it('require() gives the very module import() gives', async () => {
    const imported = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createRequire } from 'node:module'
const required = createRequire(import.meta.url)('@scheduling-kit/core')
const imported = await import('@scheduling-kit/core')
process.stdout.write(JSON.stringify([required.createWebhookHandler === imported.createWebhookHandler, Object.keys(required).length]))`,
      ],
      { cwd: packageDir, encoding: 'utf8' },
    )
    expect(imported.stderr).toBe('')
    const [same, names] = JSON.parse(imported.stdout) as [boolean, number]
    expect(same).toBe(true)
    expect(names).toBe(Object.keys(await import('@scheduling-kit/core')).length)
  })

  it('sign and verify the same way imported, required, and with the Web Crypto platform', async () => {
    const body = '{"type":"event.created","id":"payload_1"}'
    const header = sign(body, 'k')
    for (const core of [
      await import('@scheduling-kit/core'),
      require('@scheduling-kit/core') as Core,
    ]) {
      expect(await core.signPayload(body, 'k')).toBe(header)
      expect(await core.verifySignature(body, header.toLowerCase(), ['x', 'k'])).toBe(true)
      expect(await core.matchSignature(body, header, ['x', 'k'])).toBe(1)
      expect(core.EVENT_TYPES).toHaveLength(16)
    }
    const web = await platform('platform.js')
    const node = await platform('platform.node.js')
    expect([web.defaultProvider.name, node.defaultProvider.name]).toEqual(['web', 'node'])
    const hex = header.slice('sha256='.length)
    for (const provider of [web.defaultProvider, node.defaultProvider]) {
      expect(
        Buffer.from(await provider.sign('k', body))
          .toString('hex')
          .toUpperCase(),
      ).toBe(hex)
      expect(await provider.verify('k', body, hex.toLowerCase())).toBe(true)
      expect(await provider.verify('k', `${body} `, hex)).toBe(false)
    }
  })

  it('use node:crypto on Node: Web Crypto is never called', async () => {
    const body = '{"type":"event.created","id":"payload_1"}'
    const header = sign(body, 'k')
    const core = await import('@scheduling-kit/core')
    const web = await platform('platform.js')
    const verify = vi.spyOn(globalThis.crypto.subtle, 'verify')
    try {
      expect(await core.verifySignature(body, header, 'k')).toBe(true)
      expect(verify).not.toHaveBeenCalled()
      // The check can fail: the Web platform's provider does call it.
      expect(await web.defaultProvider.verify('k', body, header.slice(7))).toBe(true)
      expect(verify).toHaveBeenCalledOnce()
    } finally {
      verify.mockRestore()
    }
  })

  it('recognise errors thrown by another installed copy of the package', async () => {
    const esm = await import('@scheduling-kit/core')
    const dir = mkdtempSync(join(tmpdir(), 'scheduling-kit-copy-'))
    try {
      const copy = join(dir, 'node_modules', '@scheduling-kit', 'core')
      mkdirSync(copy, { recursive: true })
      cpSync(join(packageDir, 'dist'), join(copy, 'dist'), { recursive: true })
      cpSync(join(packageDir, 'package.json'), join(copy, 'package.json'))
      const other = createRequire(join(dir, 'index.js'))('@scheduling-kit/core') as Core
      expect(
        pathToFileURL(createRequire(join(dir, 'index.js')).resolve('@scheduling-kit/core')).href,
      ).toContain(dir)
      expect(other.parseEnvelope).not.toBe(esm.parseEnvelope)
      let error: unknown
      try {
        other.parseEnvelope('x')
      } catch (caught) {
        error = caught
      }
      expect(error instanceof esm.WebhookError).toBe(false)
      expect(esm.isWebhookError(error, 'invalid_json')).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('OpenTelemetry in the published build', () => {
  it.each(['import', 'require'])(
    'the node build finds @opentelemetry/api by itself (%s): an SDK records a delivery',
    (how) => {
      const run = spawnSync(
        process.execPath,
        [fileURLToPath(new URL('../fixtures/otel-child.mjs', import.meta.url)), how],
        { encoding: 'utf8' },
      )
      expect(run.stderr).toBe('')
      expect(JSON.parse(run.stdout)).toEqual({
        status: 200,
        spans: [
          'scheduling.webhook.dedupe.claim',
          'scheduling.webhook.delivery',
          'scheduling.webhook.handler',
          'scheduling.webhook.verify',
        ],
      })
    },
  )

  it('with the API installed and no SDK, a webhook-only app never loads it; an SDK started later is found', () => {
    const run = spawnSync(
      process.execPath,
      [fileURLToPath(new URL('../fixtures/otel-lazy-child.mjs', import.meta.url))],
      { encoding: 'utf8' },
    )
    expect(run.stderr).toBe('')
    const { before, after } = JSON.parse(run.stdout)
    expect(before).toEqual({ status: 200, loaded: false })
    expect(after.status).toBe(200)
    expect([...after.spans].sort()).toEqual([
      'scheduling.webhook.dedupe.claim',
      'scheduling.webhook.delivery',
      'scheduling.webhook.handler',
      'scheduling.webhook.verify',
    ])
  })
})
