import { describe, expect, it } from 'vitest'
import { createWebhookHandler } from '../../src/index.js'
import { dispatchQueued, queuedDelivery, withinMs } from '../../src/worker/job.js'

// A date of today (UTC): a delivery's time within any horizon the handler refuses past (maxAgeMs).
const TODAY = new Date().toISOString().slice(0, 10)

const event = {
  id: 'payload_q1',
  type: 'event.created',
  occurred_at: `${TODAY}T14:03:22Z`,
  payload: { id: 'evt_1' },
} as never

describe('a queued delivery', () => {
  it('holds the event and what a handler may use of its context, never the headers', () => {
    const job = queuedDelivery(
      event,
      { webhookId: 'wh_1', secretIndex: 1, account: 'acct_1', headers: { cookie: 'x' } } as never,
      { key: 'wh_1:payload_q1', trace: { traceparent: '00-ab-cd-01' } },
    )
    expect(job).toEqual({
      event,
      webhookId: 'wh_1',
      secretIndex: 1,
      account: 'acct_1',
      key: 'wh_1:payload_q1',
      trace: { traceparent: '00-ab-cd-01' },
    })
    expect(
      Object.keys(queuedDelivery(event, { webhookId: undefined, secretIndex: 0 } as never)),
    ).toEqual(['event', 'webhookId', 'secretIndex'])
  })

  it('is run with its context; a handler’s own error is what the worker sees, not the HTTP wording', async () => {
    const seen: unknown[] = []
    const handler = createWebhookHandler({
      verify: false,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      onAny: (e, context) => {
        seen.push([e.id, context.account, context.secretIndex])
        if (context.account === 'acct_fails') throw new TypeError('the booking table is locked')
      },
    })
    await dispatchQueued(handler, { event, webhookId: 'wh', secretIndex: 2, account: 'acct_ok' })
    const failure = dispatchQueued(handler, {
      event,
      webhookId: 'wh',
      secretIndex: 0,
      account: 'acct_fails',
    })
    await expect(failure).rejects.toThrow(TypeError)
    await expect(failure).rejects.toThrow('the booking table is locked')
    expect(seen).toEqual([
      ['payload_q1', 'acct_ok', 2],
      ['payload_q1', 'acct_fails', 0],
    ])
  })
})

describe('withinMs', () => {
  it('gives the work’s result, or rejects with the message once the time passed', async () => {
    expect(await withinMs(Promise.resolve(7), 1_000, 'late')).toBe(7)
    await expect(withinMs(new Promise(() => {}), 20, 'the write took too long')).rejects.toThrow(
      'the write took too long',
    )
    await expect(withinMs(Promise.reject(new Error('refused')), 1_000, 'late')).rejects.toThrow(
      'refused',
    )
  })
})
