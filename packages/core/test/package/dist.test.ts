// The package as published: resolved by name through its exports map, in ESM and CJS.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import { sign } from '../helpers.js'

const require = createRequire(import.meta.url)

describe('published entry points', () => {
  it('resolve the node entry under the node condition, for import and require', () => {
    expect(require.resolve('@scheduling-kit/core')).toMatch(/dist[\\/]index\.node\.cjs$/)
    expect(import.meta.resolve('@scheduling-kit/core')).toMatch(/dist\/index\.node\.js$/)
  })

  it('sign and verify the same way from the node entry (ESM, CJS) and the Web Crypto entry', async () => {
    const body = '{"type":"event.created","id":"payload_1"}'
    const header = sign(body, 'k')
    const entries = [
      await import('@scheduling-kit/core'),
      require('@scheduling-kit/core') as typeof import('@scheduling-kit/core'),
      (await import('../../dist/index.js')) as typeof import('@scheduling-kit/core'),
      require('../../dist/index.cjs') as typeof import('@scheduling-kit/core'),
    ]
    for (const core of entries) {
      expect(await core.signPayload(body, 'k')).toBe(header)
      expect(await core.verifySignature(body, header.toLowerCase(), ['x', 'k'])).toBe(true)
      expect(await core.matchSignature(body, header, ['x', 'k'])).toBe(1)
      expect(core.EVENT_TYPES).toHaveLength(16)
    }
  })

  it('use node:crypto in the node entry and Web Crypto in the default entry, independently', async () => {
    const body = '{"type":"event.created","id":"payload_1"}'
    const header = sign(body, 'k')
    const nodeEntry = await import('@scheduling-kit/core')
    const webEntry = (await import('../../dist/index.js')) as typeof import('@scheduling-kit/core')
    const verify = vi.spyOn(globalThis.crypto.subtle, 'verify')
    try {
      expect(await nodeEntry.verifySignature(body, header, 'k')).toBe(true)
      expect(verify).not.toHaveBeenCalled()
      expect(await webEntry.verifySignature(body, header, 'k')).toBe(true)
      expect(verify).toHaveBeenCalledOnce()
      expect(await nodeEntry.verifySignature(body, header, 'k')).toBe(true)
      expect(verify).toHaveBeenCalledOnce()
    } finally {
      verify.mockRestore()
    }
  })

  it('recognise errors thrown by the other copy (ESM and CJS)', async () => {
    const esm = await import('@scheduling-kit/core')
    const cjs = require('@scheduling-kit/core') as typeof import('@scheduling-kit/core')
    let error: unknown
    try {
      cjs.parseEnvelope('x')
    } catch (caught) {
      error = caught
    }
    expect(error instanceof esm.WebhookError).toBe(false)
    expect(esm.isWebhookError(error, 'invalid_json')).toBe(true)
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
