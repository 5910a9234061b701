import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { nodeCrypto } from '../../src/crypto/node.js'
import type { HmacProvider } from '../../src/crypto/provider.js'
import { webCrypto } from '../../src/crypto/web.js'
import { match as matchWith, parseSignatureHeader, signWith } from '../../src/webhooks/signature.js'

const SECRET = 'whsec_test_7f3a9c'
const BODY = '{"type":"event.created","id":"payload_01HY"}'
/** Reference digest computed independently of the code under test. */
const reference = (body: string | Uint8Array, secret: string) =>
  createHmac('sha256', secret).update(body).digest('hex')

describe.each<[string, HmacProvider]>([
  ['node:crypto', nodeCrypto],
  ['Web Crypto', webCrypto],
])('signatures through %s', (_name, provider) => {
  const verify = async (
    body: string | Uint8Array,
    header: string | undefined,
    secrets: string | string[],
  ) => (await matchWith(provider, body, header, secrets)) >= 0

  it('signs as the service does: sha256= and upper-case hex of HMAC-SHA256', async () => {
    const header = await signWith(provider, BODY, SECRET)
    expect(header).toBe(`sha256=${reference(BODY, SECRET).toUpperCase()}`)
    expect(header).toMatch(/^sha256=[0-9A-F]{64}$/)
  })

  it('signs a Uint8Array body exactly as its UTF-8 string', async () => {
    const text = '{"type":"event.created","id":"payload_1","payload":{"description":"Café ☕"}}'
    expect(await signWith(provider, new TextEncoder().encode(text), SECRET)).toBe(
      await signWith(provider, text, SECRET),
    )
  })

  it('accepts upper- and lower-case hex, with or without the prefix, with surrounding space', async () => {
    const hex = reference(BODY, SECRET)
    for (const header of [
      `sha256=${hex.toUpperCase()}`,
      `sha256=${hex}`,
      hex.toUpperCase(),
      hex,
      `SHA256=${hex}`,
      `  sha256=${hex}\t`,
    ]) {
      expect(await verify(BODY, header, SECRET), header).toBe(true)
    }
  })

  it('rejects a wrong, truncated, padded or non-hex signature', async () => {
    const hex = reference(BODY, SECRET)
    const wrong = reference(BODY, `${SECRET}x`)
    for (const header of [
      `sha256=${wrong}`,
      `sha256=${hex.slice(0, 62)}`,
      `sha256=${hex}00`,
      `sha256=${hex.slice(0, 63)}g`,
      `sha1=${hex}`,
      `sha256=sha256=${hex}`,
      '',
      'sha256=',
    ]) {
      expect(await verify(BODY, header, SECRET), header).toBe(false)
    }
    expect(await verify(BODY, undefined, SECRET)).toBe(false)
  })

  it('refuses a character that only lower-cases to the right hex digit, at every position', async () => {
    // The check lower-cases with `| 0x20`: a control character such as 0x10 becomes '0'. Every
    // such character, and every non-ASCII character, must still refuse the header.
    const hex = reference(BODY, SECRET)
    for (let i = 0; i < 64; i++) {
      const want = hex.charCodeAt(i)
      for (const code of [want & ~0x20, want & ~0x20 & 0x1f, want + 0xff00, want | 0x80]) {
        const c = String.fromCharCode(code)
        if (/[0-9a-fA-F]/.test(c) && (code | 0x20) === want) continue
        const forged = `sha256=${hex.slice(0, i)}${c}${hex.slice(i + 1)}`
        expect(await verify(BODY, forged, SECRET), JSON.stringify(forged)).toBe(false)
      }
    }
  })

  it('property: a string body verifies exactly as its UTF-8 bytes, lone surrogates included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.string({ minLength: 1, maxLength: 40 }),
        async (text, secret) => {
          const bytes = new TextEncoder().encode(text)
          const header = `sha256=${reference(bytes, secret)}`
          expect(await verify(text, header, secret)).toBe(true)
          expect(await signWith(provider, text, secret)).toBe(
            `sha256=${reference(bytes, secret).toUpperCase()}`,
          )
          expect(await verify(`${text}\u0000`, header, secret)).toBe(false)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('tells which secret matched while rotating, and -1 when none did', async () => {
    const header = `sha256=${reference(BODY, 'new-secret')}`
    expect(await matchWith(provider, BODY, header, ['old-secret', 'new-secret'])).toBe(1)
    expect(await matchWith(provider, BODY, header, ['new-secret', 'old-secret'])).toBe(0)
    expect(await matchWith(provider, BODY, header, ['old-secret', 'other'])).toBe(-1)
    expect(await matchWith(provider, BODY, header, [])).toBe(-1)
  })

  it('never matches an empty secret', async () => {
    const header = `sha256=${reference(BODY, '')}`
    expect(await verify(BODY, header, '')).toBe(false)
    expect(await verify(BODY, header, ['', ''])).toBe(false)
  })

  it('property: any change to the body, the signature or the secret fails verification', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 512 }),
        fc.string({ minLength: 1, maxLength: 64 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        async (body, secret, where, flip) => {
          const header = await signWith(provider, body, secret)
          expect(await verify(body, header, secret)).toBe(true)
          if (body.length > 0) {
            const changed = body.slice()
            changed[where % body.length]! ^= flip
            expect(await verify(changed, header, secret)).toBe(false)
          }
          expect(await verify(new Uint8Array([...body, 0]), header, secret)).toBe(false)
          const digits = header.slice(7).split('')
          const i = where % digits.length
          digits[i] = digits[i] === '0' ? '1' : '0'
          expect(await verify(body, `sha256=${digits.join('')}`, secret)).toBe(false)
          expect(await verify(body, header, `${secret}!`)).toBe(false)
        },
      ),
      { numRuns: 200 },
    )
  })
})

describe('node:crypto and Web Crypto', () => {
  it('property: both paths give the same signature and the same verdict on random input', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ maxLength: 300 }), fc.uint8Array({ maxLength: 300 })),
        fc.string({ minLength: 1, maxLength: 80 }),
        fc.string({ maxLength: 80 }),
        async (body, secret, junkHeader) => {
          const a = await signWith(nodeCrypto, body, secret)
          const b = await signWith(webCrypto, body, secret)
          expect(a).toBe(b)
          for (const header of [a, a.toLowerCase(), junkHeader]) {
            expect(await matchWith(nodeCrypto, body, header, secret)).toBe(
              await matchWith(webCrypto, body, header, secret),
            )
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('parseSignatureHeader', () => {
  it('decodes 64 hex digits in either case to 32 bytes', () => {
    const hex = 'ab'.repeat(32)
    expect(parseSignatureHeader(`sha256=${hex.toUpperCase()}`)).toEqual(
      new Uint8Array(32).fill(0xab),
    )
    expect(parseSignatureHeader('sha256=xyz')).toBeUndefined()
  })
})
