// Properties over signature headers, bodies and secrets, on both platforms of the published
// package: node:crypto (what Node's resolution picks) and Web Crypto (the package bundled for a
// browser, as a Worker's or an edge runtime's bundler builds it). `pnpm fuzz` runs 20 000 of each.
import { createHmac } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import fc from 'fast-check'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { fromHex } from '../../src/platform/bytes.js'

const RUNS = Number(process.env.FUZZ_RUNS ?? 300)
const TIMEOUT = Math.max(30_000, RUNS * 20)

type Core = typeof import('@scheduling-kit/core')

/** The published entry bundled with the browser's conditions: `#platform` is the Web file. */
const bundleDir = mkdtempSync(join(tmpdir(), 'core-web-'))
afterAll(() => rmSync(bundleDir, { recursive: true, force: true }))
let webCore: Promise<Core> | undefined
function webBuild(): Promise<Core> {
  webCore ??= (async () => {
    const outfile = join(bundleDir, 'core.mjs')
    await build({
      entryPoints: [fileURLToPath(new URL('../../dist/index.js', import.meta.url))],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      outfile,
      logLevel: 'error',
    })
    return (await import(pathToFileURL(outfile).href)) as Core
  })()
  return webCore
}

const builds: Array<[string, () => Promise<Core>]> = [
  ['node build', () => import('@scheduling-kit/core')],
  ['Web Crypto build', webBuild],
]

it('the Web Crypto build verifies with crypto.subtle, the node build never does', async () => {
  const body = '{"type":"event.created","id":"payload_platform"}'
  const header = `sha256=${hex(body, 'k')}`
  const verify = vi.spyOn(globalThis.crypto.subtle, 'verify')
  try {
    expect(await (await import('@scheduling-kit/core')).verifySignature(body, header, 'k')).toBe(
      true,
    )
    expect(verify).not.toHaveBeenCalled()
    expect(await (await webBuild()).verifySignature(body, header, 'k')).toBe(true)
    expect(verify).toHaveBeenCalled()
  } finally {
    verify.mockRestore()
  }
})

const hex = (body: string | Uint8Array, secret: string) =>
  createHmac('sha256', secret).update(body).digest('hex')

/** Characters that are, or look like, or alias onto hex digits in a 256-entry table. */
const trickyChar = fc.oneof(
  fc.constantFrom(...'0123456789abcdefABCDEF'.split('')),
  // Full-width digits and letters.
  fc.integer({ min: 0xff10, max: 0xff19 }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xff21, max: 0xff26 }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xff41, max: 0xff46 }).map((c) => String.fromCharCode(c)),
  // Any code whose low byte is an ASCII hex digit.
  fc
    .tuple(fc.integer({ min: 1, max: 0xff }), fc.constantFrom(...'0123456789abcdefABCDEF'))
    .map(([high, d]) => String.fromCharCode((high << 8) | d.charCodeAt(0))),
  // Characters whose lower case changes length or lands on ASCII.
  fc.constantFrom('\u0130', '\u212a', '\u212b', '\u00df'),
  fc.string({ maxLength: 1, unit: 'binary' }),
)

/** White space of every kind: only HTTP's own (space, tab) may surround a header value. */
const space = fc.string({
  unit: fc.constantFrom(' ', '\t', '\u00a0', '\u2003', '\u3000', '\ufeff', '\n', '\r', '\v', '\f'),
  maxLength: 3,
})

/** What the spec accepts: optional `sha256=` (any case), 64 ASCII hex digits, spaces or tabs around. */
function oracle(header: string, expected: string): boolean {
  let value = header.replace(/^[ \t]+|[ \t]+$/g, '')
  if (value.slice(0, 7).toLowerCase() === 'sha256=') value = value.slice(7)
  return /^[0-9a-fA-F]{64}$/.test(value) && value.toLowerCase() === expected
}

describe.each(builds)('%s', (_name, load) => {
  it(
    'property: a header verifies exactly when the spec says so (look-alike digits never do)',
    async () => {
      const core = await load()
      const body = '{"type":"event.created","id":"payload_fuzz"}'
      const secret = 'whsec_fuzz'
      const expected = hex(body, secret)
      const header = fc.oneof(
        fc
          .tuple(fc.nat({ max: 63 }), trickyChar)
          .map(([at, c]) => `sha256=${expected.slice(0, at)}${c}${expected.slice(at + 1)}`),
        fc
          .tuple(fc.nat({ max: 63 }), trickyChar)
          .map(([at, c]) => `${expected.toUpperCase().slice(0, at)}${c}${expected.slice(at + 1)}`),
        fc
          .array(fc.boolean(), { minLength: 64, maxLength: 64 })
          .map(
            (upper) =>
              `SHA256=${[...expected].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')}`,
          ),
        fc.string({ unit: trickyChar, minLength: 60, maxLength: 72 }),
        fc
          .tuple(space, fc.constantFrom('', 'sha256=', 'SHA256='), space)
          .map(([before, prefix, after]) => `${before}${prefix}${expected}${after}`),
      )
      await fc.assert(
        fc.asyncProperty(header, async (h) => {
          expect(await core.verifySignature(body, h, secret)).toBe(oracle(h, expected))
        }),
        { numRuns: RUNS },
      )
    },
    TIMEOUT,
  )

  it(
    'property: any body or secret verifies with its own signature and with no other',
    async () => {
      const core = await load()
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(fc.string(), fc.uint8Array({ maxLength: 512 })),
          fc.string({ minLength: 1 }).filter((s) => s.trim() !== ''),
          fc.string({ minLength: 1 }),
          async (body, secret, other) => {
            const header = await core.signPayload(body, secret)
            expect(header.slice(7).toLowerCase()).toBe(hex(body, secret))
            expect(await core.matchSignature(body, header, [other, secret])).toBe(
              other === secret || hex(body, other) === hex(body, secret) ? 0 : 1,
            )
            const changed =
              typeof body === 'string' ? `${body} ` : Uint8Array.of(...body, body.length & 0xff)
            expect(await core.verifySignature(changed, header, secret)).toBe(false)
          },
        ),
        { numRuns: RUNS },
      )
    },
    TIMEOUT,
  )
})

describe('fromHex', () => {
  it('property: decodes exactly the ASCII hex strings of even length', () => {
    fc.assert(
      fc.property(fc.string({ unit: trickyChar, maxLength: 16 }), (text) => {
        const bytes = fromHex(text)
        const ascii = /^(?:[0-9a-fA-F]{2})*$/.test(text)
        expect(bytes !== undefined).toBe(ascii)
        if (bytes) expect(Buffer.from(bytes).toString('hex')).toBe(text.toLowerCase())
      }),
      { numRuns: RUNS * 10 },
    )
  })
})
