import { describe, expect, it } from 'vitest'
import { constructEvent } from '../../src/webhooks/construct.js'
import { envelope, sign } from '../helpers.js'

describe('constructEvent', () => {
  const body = JSON.stringify(envelope('event.rescheduled'))

  it('verifies and parses in one call, from a header record or a Headers object', async () => {
    const event = await constructEvent({
      body,
      headers: { 'x-service-signature': sign(body, 's') },
      secret: 's',
    })
    expect(event.type).toBe('event.rescheduled')
    const headers = new Headers({ 'X-Service-Signature': sign(body, 's').toLowerCase() })
    expect(
      (await constructEvent({ body: new TextEncoder().encode(body), headers, secret: 's' })).id,
    ).toBe(JSON.parse(body).id)
  })

  it('honours custom header names and secret lookup by webhook id', async () => {
    const event = await constructEvent({
      body,
      headers: { 'x-sig': sign(body, 'b'), 'x-hook': 'wh_b' },
      secret: (id) => (id === 'wh_b' ? 'b' : undefined),
      signatureHeader: 'x-sig',
      webhookIdHeader: 'x-hook',
    })
    expect(event.type).toBe('event.rescheduled')
  })

  it('throws a WebhookError whose status is the answer to send', async () => {
    await expect(constructEvent({ body, headers: {}, secret: 's' })).rejects.toMatchObject({
      code: 'signature_missing',
      status: 401,
    })
    await expect(
      constructEvent({ body, headers: { 'x-service-signature': sign(body, 'x') }, secret: 's' }),
    ).rejects.toMatchObject({ code: 'signature_invalid', status: 401 })
    await expect(
      constructEvent({
        body: JSON.parse(body),
        headers: { 'x-service-signature': sign(body, 's') },
        secret: 's',
      }),
    ).rejects.toMatchObject({ code: 'body_parsed', status: 500 })
    await expect(
      constructEvent({
        body: '[]',
        headers: { 'x-service-signature': sign('[]', 's') },
        secret: 's',
      }),
    ).rejects.toMatchObject({ code: 'invalid_envelope', status: 400 })
    await expect(
      constructEvent({
        body,
        headers: { 'x-service-signature': sign(body, 's') },
        secret: 's',
        bodyLimit: 10,
      }),
    ).rejects.toMatchObject({ code: 'payload_too_large', status: 413 })
  })
})
