import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isWebhookError } from '../../src/errors/errors.js'
import { parseEnvelope } from '../../src/webhooks/envelope.js'
import { EVENT_TYPES, isEventType, isKnownEventType } from '../../src/webhooks/events.js'

function codeOf(body: string | Uint8Array): string | undefined {
  try {
    parseEnvelope(body)
    return undefined
  } catch (error) {
    return isWebhookError(error) ? error.code : 'not a WebhookError'
  }
}

describe('parseEnvelope', () => {
  it('returns the whole envelope, keeping fields it does not know', () => {
    const body = {
      type: 'event.created',
      id: 'payload_01HYABC',
      version: '2020-11-18',
      occurred_at: '2024-05-01T14:03:22Z',
      payload: { id: 'event_1', state: 'confirmed', custom: [1, 2] },
      extra_field: { nested: true },
    }
    expect(parseEnvelope(JSON.stringify(body))).toEqual(body)
  })

  it('accepts bytes as well as a string', () => {
    const text = '{"type":"poll.response.created","id":"payload_9","payload":{"answer":"Oui ✓"}}'
    expect(parseEnvelope(new TextEncoder().encode(text))).toEqual(JSON.parse(text))
  })

  it('accepts an unknown type for forward compatibility', () => {
    const event = parseEnvelope('{"type":"meeting.teleported","id":"payload_x"}')
    expect(event.type).toBe('meeting.teleported')
    expect(isKnownEventType(event.type)).toBe(false)
  })

  it.each([
    ['invalid_json', '{"type":'],
    ['invalid_json', ''],
    ['invalid_json', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])],
    ['invalid_envelope', 'null'],
    ['invalid_envelope', '[]'],
    ['invalid_envelope', '"event.created"'],
    ['invalid_envelope', '42'],
    ['invalid_type', '{"id":"payload_1"}'],
    ['invalid_type', '{"type":"","id":"payload_1"}'],
    ['invalid_type', '{"type":7,"id":"payload_1"}'],
    ['invalid_type', `{"type":"${'a'.repeat(201)}","id":"payload_1"}`],
    ['invalid_id', '{"type":"event.created"}'],
    ['invalid_id', '{"type":"event.created","id":"evt_1"}'],
    ['invalid_id', '{"type":"event.created","id":"payload_"}'],
    ['invalid_id', '{"type":"event.created","id":42}'],
    ['invalid_id', '{"type":"event.created","id":"payload_1 OR 1=1"}'],
  ] as const)('throws %s for %j', (code, body) => {
    expect(codeOf(body)).toBe(code)
  })

  it('answers 400 for every parse error', () => {
    for (const body of ['nope', '[]', '{"id":"payload_1"}', '{"type":"event.created"}']) {
      let status: number | undefined
      try {
        parseEnvelope(body)
      } catch (error) {
        status = isWebhookError(error) ? error.status : -1
      }
      expect(status, body).toBe(400)
    }
  })

  it('property: no input makes it throw anything but a WebhookError', () => {
    const envelopeLike = fc.record(
      {
        type: fc.oneof(fc.constantFrom(...EVENT_TYPES), fc.string(), fc.anything()),
        id: fc.oneof(
          fc.string().map((s) => `payload_${s}`),
          fc.anything(),
        ),
        payload: fc.anything(),
      },
      { requiredKeys: [] },
    )
    const inputs = fc.oneof(
      fc.string(),
      fc.uint8Array(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      envelopeLike.map((v) => JSON.stringify(v) ?? ''),
    )
    fc.assert(
      fc.property(inputs, (body) => {
        const code = codeOf(body)
        expect(code === undefined || !code.startsWith('not')).toBe(true)
      }),
      { numRuns: 2000 },
    )
  })
})

describe('event types', () => {
  it('lists the 16 types of the spec, once each', () => {
    expect(EVENT_TYPES).toHaveLength(16)
    expect(new Set(EVENT_TYPES).size).toBe(16)
    expect(EVENT_TYPES.every(isKnownEventType)).toBe(true)
  })

  it('isEventType narrows to one type or a list', () => {
    const event = parseEnvelope('{"type":"event.canceled","id":"payload_1"}')
    expect(isEventType(event, 'event.canceled')).toBe(true)
    expect(isEventType(event, 'event.created')).toBe(false)
    expect(isEventType(event, ['event.created', 'event.canceled'])).toBe(true)
  })
})
