// A body the app's JSON parser already turned into a value (express.json() mounted first): the
// handler verifies the value's compact serialization. These properties attack that fallback with
// every way of writing the same JSON differently (white space, key order, escapes, number forms,
// duplicate keys) and with forged values, and compare each answer with today's check over the
// real bytes. `pnpm fuzz` runs FUZZ_RUNS of each.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { hasOneWriting, isParsedValue, serializedBody } from '../../src/webhooks/body/parsed.js'
import type { AnyWebhookEvent } from '../../src/webhooks/events.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import { sign } from '../helpers.js'

// A date of today (UTC): a delivery's time within any horizon the handler refuses past (maxAgeMs).
const TODAY = new Date().toISOString().slice(0, 10)

const SECRET = 'parsed-secret'
const RUNS = Number(process.env.FUZZ_RUNS ?? 300)
const TIMEOUT = Math.max(60_000, RUNS * 40)
const encoder = new TextEncoder()
const quiet = { debug() {}, info() {}, warn() {}, error() {} }

type Kind = 'space' | 'order' | 'escape' | 'number' | 'duplicate' | 'decode'
const KINDS: readonly Kind[] = ['space', 'order', 'escape', 'number', 'duplicate', 'decode']

/** Draws from fast-check inside a property (`fc.gen()`). */
type Draw = fc.GeneratorValue

/** Another way to write a finite number that parses to the same value, or its own form. */
function numberForm(n: number, draw: Draw): string {
  const plain = JSON.stringify(n)
  const forms = [plain]
  if (plain.includes('e')) forms.push(plain.replace('e+', 'E').replace('e', 'E'))
  else {
    forms.push(`${plain}e0`, `${plain}E+00`)
    if (!plain.includes('.')) forms.push(`${plain}.0`)
    const zeros = /^(-?\d*[1-9])(0+)$/.exec(plain)
    if (zeros) forms.push(`${zeros[1]}e${zeros[2]!.length}`) // 100 as 1e2: the same length
    if (n === 0) forms.push('-0', '0.0', '0e5')
  }
  return forms[draw(fc.nat, { max: forms.length - 1 })]!
}

/** A string written with escapes where `draw` says (a lone surrogate is always escaped). */
function stringForm(s: string, draw: Draw): string {
  let out = '"'
  for (const ch of s) {
    const code = ch.codePointAt(0)!
    const lone = ch.length === 1 && code >= 0xd800 && code <= 0xdfff
    const plain = JSON.stringify(ch).slice(1, -1)
    const escaped = [...ch]
      .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join('')
    const forms = [plain, escaped, escaped.toUpperCase().replaceAll('\\U', '\\u')]
    if (ch === '/') forms.push('\\/')
    out += lone
      ? forms[1 + draw(fc.nat, { max: 1 })]!
      : forms[draw(fc.nat, { max: forms.length - 1 })]!
  }
  return `${out}"`
}

/**
 * The JSON value written as some other sender could have written it: each kind in `kinds` may
 * apply at every place it can. Parses to the same value as `JSON.stringify(value)` (with
 * `duplicate`, an earlier copy of a key that the last one overrides).
 */
function written(value: unknown, kinds: ReadonlySet<Kind>, draw: Draw): string {
  const ws = () =>
    kinds.has('space') && draw(fc.boolean)
      ? draw(fc.constantFrom, ' ', '\n', '\t', '\r\n', '  ')
      : ''
  const write = (v: unknown): string => {
    if (typeof v === 'number') return kinds.has('number') ? numberForm(v, draw) : JSON.stringify(v)
    if (typeof v === 'string') return kinds.has('escape') ? stringForm(v, draw) : JSON.stringify(v)
    if (v === null || typeof v !== 'object') return JSON.stringify(v)
    if (Array.isArray(v)) return `[${ws()}${v.map((x) => write(x) + ws()).join(`,${ws()}`)}]`
    let keys = Object.keys(v)
    if (kinds.has('order') && keys.length > 1)
      keys = draw(fc.shuffledSubarray, keys, {
        minLength: keys.length,
      })
    const members: string[] = []
    for (const key of keys) {
      const name = kinds.has('escape') ? stringForm(key, draw) : JSON.stringify(key)
      if (kinds.has('duplicate') && draw(fc.boolean)) {
        members.push(`${name}:${ws()}${JSON.stringify(draw(fc.jsonValue, { maxDepth: 1 }))}`)
      }
      members.push(
        `${ws()}${name}${ws()}:${ws()}${write((v as Record<string, unknown>)[key])}${ws()}`,
      )
    }
    return `{${members.join(',')}}`
  }
  return `${ws()}${write(value)}${ws()}`
}

const envelopes = fc.record({
  type: fc.constantFrom('event.created', 'event.canceled', 'poll.response.created', 'x.future'),
  id: fc.stringMatching(/^[A-Za-z0-9]{1,12}$/).map((s) => `payload_${s}`),
  occurred_at: fc.constant(`${TODAY}T14:03:22Z`),
  payload: fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    // Values with more than one writing of their length, each among ordinary fields.
    fc.record({
      description: fc.constantFrom(
        'Café ☕\n"quoted"\t\\ /',
        'x\ufffdy',
        'a\u000bb',
        'lone \ud800',
      ),
      count: fc.constantFrom(7, 100, 1200, 0.05, -0.001, 1e21, 5e-7, 12.5),
      metadata: fc.constantFrom({ note: 'n' }, { '1': 'a', b: 'c' }, { '10': 'x' }),
      attendees: fc.array(fc.record({ email: fc.emailAddress(), n: fc.integer() }), {
        maxLength: 2,
      }),
    }),
  ),
})

/**
 * The bytes of a writing; with `decode`, each U+FFFD written as invalid UTF-8 that a decoder
 * turns back into one (a cut 4-byte sequence: the same length; a lone byte: shorter).
 */
function asSent(text: string, decode: boolean, draw: Draw): Uint8Array {
  const bytes = encoder.encode(text)
  if (!decode) return bytes
  const out: number[] = []
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0xef && bytes[i + 1] === 0xbf && bytes[i + 2] === 0xbd) {
      out.push(...draw(fc.constantFrom, [0xf0, 0x9f, 0x98], [0xff], [0xef, 0xbf, 0xbd]))
      i += 2
    } else out.push(bytes[i]!)
  }
  return Uint8Array.from(out)
}

/** One delivery to a fresh handler: what it answered, and the event its handler ran with. */
async function deliver(
  body: object | Uint8Array,
  signedText: string,
  length: number,
): Promise<{ status: number; code?: string; ran?: AnyWebhookEvent }> {
  let ran: AnyWebhookEvent | undefined
  const handler = createWebhookHandler(SECRET, {
    onAny: (event) => {
      ran = event
    },
    logger: quiet,
  })
  const answer = await handler.handle({
    method: 'POST',
    path: '/webhooks/scheduling',
    headers: {
      'content-type': 'application/json',
      'content-length': String(length),
      'x-service-signature': sign(signedText, SECRET),
      'x-service-webhook-id': 'wh_1',
    },
    body,
  })
  const code = answer!.status === 200 ? undefined : JSON.parse(answer!.body).error.code
  return { status: answer!.status, code, ran }
}

describe('a body a JSON parser made first (the compact-serialization fallback)', () => {
  it(
    'property: the service’s compact body, parsed first, runs with exactly that body unless its value has another writing of its length',
    async () => {
      let ran = 0
      await fc.assert(
        fc.asyncProperty(envelopes, async (value) => {
          const signed = JSON.stringify(value)
          const answer = await deliver(JSON.parse(signed), signed, encoder.encode(signed).length)
          if (hasOneWriting(JSON.parse(signed))) {
            expect(answer.status).toBe(200)
            expect(JSON.stringify(answer.ran)).toBe(signed)
            ran++
          } else {
            expect(answer).toMatchObject({ status: 500, code: 'body_parsed' })
          }
        }),
        { numRuns: RUNS },
      )
      expect(ran).toBeGreaterThan(RUNS / 10) // both branches seen
    },
    TIMEOUT,
  )

  it(
    'property: bytes written another way, parsed first, run only as the signed body itself, and only at the signed length',
    async () => {
      let accepted = 0
      await fc.assert(
        fc.asyncProperty(
          envelopes,
          fc.subarray([...KINDS], { minLength: 1 }),
          fc.gen(),
          async (value, kinds, draw) => {
            const signed = JSON.stringify(value)
            const bytes = asSent(
              written(value, new Set(kinds), draw),
              kinds.includes('decode'),
              draw,
            )
            // What a parser makes of them: decoded as UTF-8 (invalid bytes as U+FFFD), parsed.
            const sent = new TextDecoder().decode(bytes)
            // Today's check over the real bytes, and the fallback over what the parser made.
            const today = await deliver(bytes, signed, bytes.length)
            const fallback = await deliver(JSON.parse(sent), signed, bytes.length)
            if (fallback.status !== 200) {
              expect(fallback).toMatchObject({ status: 500, code: 'body_parsed' })
              expect(fallback.ran).toBeUndefined()
              return
            }
            accepted++
            // Accepted only where today's check over the real bytes accepts too: the bytes were
            // the signed bytes, and the handler saw them.
            expect(today.status).toBe(200)
            expect(JSON.stringify(fallback.ran)).toBe(signed)
          },
        ),
        { numRuns: RUNS },
      )
      // The property must have seen writings the fallback accepts (the signed bytes).
      expect(accepted).toBeGreaterThan(0)
      if (process.env.PARSED_COUNTS) console.log({ runs: RUNS, accepted })
    },
    TIMEOUT,
  )

  it(
    'property: a value other than the one signed never runs, however it is written or parsed',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          envelopes,
          fc.jsonValue({ maxDepth: 2 }),
          fc.subarray([...KINDS]),
          fc.gen(),
          async (value, other, kinds, draw) => {
            const signed = JSON.stringify(value)
            const forged = { ...value, payload: other }
            fc.pre(JSON.stringify(forged) !== signed)
            const bytes = asSent(
              written(forged, new Set(kinds), draw),
              kinds.includes('decode'),
              draw,
            )
            const sent = new TextDecoder().decode(bytes)
            for (const length of [bytes.length, encoder.encode(JSON.stringify(forged)).length]) {
              const answer = await deliver(JSON.parse(sent), signed, length)
              expect(answer.ran).toBeUndefined()
              expect(answer).toMatchObject({ status: 500, code: 'body_parsed' })
            }
          },
        ),
        { numRuns: RUNS },
      )
    },
    TIMEOUT,
  )

  it('refuses with body_parsed what cannot be the body: a declared length that differs, a value that does not serialize', async () => {
    const value = { type: 'event.created', id: 'payload_1', payload: { n: 1 } }
    const signed = JSON.stringify(value)
    const length = encoder.encode(signed).length
    expect((await deliver(value, signed, length)).status).toBe(200)
    expect(await deliver(value, signed, length + 1)).toMatchObject({ code: 'body_parsed' })
    const cyclic: Record<string, unknown> = { ...value }
    cyclic.self = cyclic
    expect(await deliver(cyclic, signed, length)).toMatchObject({ code: 'body_parsed' })
    expect(await deliver({ ...value, big: 1n }, signed, length)).toMatchObject({
      code: 'body_parsed',
    })
    // A parser with a reviver: its Date writes milliseconds the service never sent.
    const revived = { ...value, payload: { at: new Date('2024-05-01T14:03:22Z') } }
    const sent = JSON.stringify({ ...value, payload: { at: '2024-05-01T14:03:22Z' } })
    expect(await deliver(revived, sent, encoder.encode(sent).length)).toMatchObject({
      status: 500,
      code: 'body_parsed',
    })
  })

  it('tells a parsed value from bytes and streams an adapter hands over', () => {
    expect(isParsedValue({ a: 1 })).toBe(true)
    expect(isParsedValue([1])).toBe(true)
    expect(isParsedValue(Object.create(null))).toBe(true)
    expect(isParsedValue(new Uint8Array(1))).toBe(false)
    expect(isParsedValue('{}')).toBe(false)
    expect(isParsedValue(null)).toBe(false)
    expect(isParsedValue(new Map())).toBe(false)
    expect(isParsedValue({ async *[Symbol.asyncIterator]() {} })).toBe(false)
    expect(isParsedValue(new ReadableStream())).toBe(false)
    const request = { declared: Number.NaN, contentType: 'application/json' }
    expect(() => serializedBody({ a: 'x'.repeat(100) }, request, 50, undefined)).toThrow(
      /larger than the limit/,
    )
  })
})

describe('hasOneWriting', () => {
  it('refuses exactly the values that have another JSON writing no longer than their own', () => {
    const one = [
      { description: 'Café ☕\n"quoted"\t\\ /slash 😀', n: 7, x: 12.5, y: -3, z: 10, w: 0.5 },
      [true, false, null, 0, 1, 1.25, 'a'],
      { nested: { deep: [{ id: 'event_1', at: '2024-05-01T14:03:22Z' }] } },
      { '1': 'only key' },
    ]
    for (const value of one) expect(hasOneWriting(value), JSON.stringify(value)).toBe(true)
    const more = [
      { n: 100 }, // 1e2
      { n: 1200 }, // 12e2
      { n: 0.05 }, // 5e-2
      { n: 1e21 }, // 1E21
      { n: 5e-7 }, // 5E-7
      { n: -0 }, // sent as -0, written back as 0
      { s: 'x\ufffdy' }, // a decoder's replacement
      { s: 'a\u000bb' }, // \u000b or \u000B
      { s: 'lone \ud800' }, // \ud800 or \uD800
      { s: 'lone \udc00' },
      { '1': 'a', b: 'c' }, // {"b":"c","1":"a"} parses to the same object
      { 'x\ufffd': 1 },
    ]
    for (const value of more) expect(hasOneWriting(value), JSON.stringify(value)).toBe(false)
    // Deeper than any stack: walked without recursion.
    let deep: unknown = { n: 100 }
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(hasOneWriting(deep)).toBe(false)
  })
})
