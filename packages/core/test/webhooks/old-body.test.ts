import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createDeliveryLedger } from '../../src/catch-up/ledger.js'
import { MemoryDedupeStore } from '../../src/claims/dedupe.js'
import { ConfigError, type WebhookError } from '../../src/errors/errors.js'
import { MemoryLedgerStore } from '../../src/ledger/memory.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import type { WebhookHandlerOptions } from '../../src/webhooks/options.js'
import { deliver, envelope, serveHandler } from '../helpers.js'

// Old bodies: a delivery whose signed occurred_at is older than the handler's horizon (the
// ledger's retention, the dedupe window) does not run; a body within it runs as before.

const SECRET = 'test-secret'
const HOUR = 3_600_000
const DAY = 24 * HOUR
const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

/** A handler counting the bodies it ran and the errors it told, served on loopback. */
async function served(options: Omit<WebhookHandlerOptions, 'secret'> = {}) {
  const ran: string[] = []
  const told: WebhookError[] = []
  const handler = createWebhookHandler({
    secret: SECRET,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    onAny: (event) => {
      ran.push(event.id)
    },
    onError: (error) => {
      told.push(error)
    },
    ...options,
  })
  const server = await serveHandler(handler)
  closers.push(server.close)
  const send = (ageMs: number, extra: Record<string, unknown> = {}) => {
    const event = envelope('event.created', {
      occurred_at: new Date(Date.now() - ageMs).toISOString(),
      ...extra,
    })
    return deliver(server.url, JSON.stringify(event)).then((answer) => ({ ...answer, event }))
  }
  return { handler, ran, told, send }
}

describe('old bodies (maxAgeMs)', () => {
  it('the memory dedupe window (24 h): a body 60 days old is answered 200 too_old, not run, told to onError; one 23 h old runs', async () => {
    const { ran, told, send } = await served()
    const old = await send(60 * DAY)
    expect(old.status).toBe(200)
    expect(old.json.error.code).toBe('too_old')
    expect(old.json.error.message).toMatch(
      /60 days ago, past maxAgeMs: not run\. catchUp\(\) applies/,
    )
    expect(ran).toEqual([])
    expect(told.map((e) => e.code)).toEqual(['too_old'])
    const recent = await send(23 * HOUR)
    expect(recent.status).toBe(200)
    expect(recent.json.received).toBe(true)
    expect(ran).toEqual([recent.event.id])
  })

  it('a retry of a delivery within the window runs once and is a duplicate after; a body sent again past it is refused, not run a second time', async () => {
    const { ran, send } = await served({ dedupe: new MemoryDedupeStore({ ttlMs: HOUR }) })
    const first = await send(10 * 60_000)
    expect(first.json.received).toBe(true)
    const again = await send(2 * HOUR)
    expect(again.json.error.code).toBe('too_old')
    expect(ran).toEqual([first.event.id])
  })

  it("with a ledger its retention is the horizon, and the ledger's page lists the refusal", async () => {
    const ledger = createDeliveryLedger({
      store: new MemoryLedgerStore(),
      retention: { entryMs: 30 * DAY },
    })
    const { ran, send } = await served({ ledger })
    const within = await send(29 * DAY)
    expect(within.json.received).toBe(true)
    const past = await send(31 * DAY)
    expect(past.json.error.code).toBe('too_old')
    expect(ran).toEqual([within.event.id])
    expect(ledger.recent().map((r) => r.code)).toContain('too_old')
  })

  it('maxAgeMs given: its own horizon; false runs a body of any age; a body without occurred_at runs', async () => {
    const hour = await served({ maxAgeMs: HOUR })
    expect((await hour.send(2 * HOUR)).json.error.code).toBe('too_old')
    expect((await hour.send(30 * 60_000)).json.received).toBe(true)
    const any = await served({ maxAgeMs: false })
    expect((await any.send(400 * DAY)).json.received).toBe(true)
    const none = await served()
    expect((await none.send(60 * DAY, { occurred_at: undefined })).json.received).toBe(true)
  })

  it('maxAgeMs other than a whole number of ms above 0, or false, is refused at construction', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '1h', true, null]) {
      expect(
        () => createWebhookHandler({ secret: SECRET, maxAgeMs: bad as never }),
        String(bad),
      ).toThrow(ConfigError)
    }
  })

  it('property: over ages either side of the horizon, to the millisecond, a body runs exactly when it is within it', async () => {
    const maxAgeMs = 6 * HOUR
    const { ran, send } = await served({ maxAgeMs })
    // The clock driven, not read: the handler's now is the sender's, whatever the machine's load.
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime(Date.parse('2030-06-01T12:00:00.000Z'))
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.integer({ min: -HOUR, max: 2 * maxAgeMs }),
            fc.integer({ min: maxAgeMs - 2, max: maxAgeMs + 2 }),
          ),
          async (age) => {
            const before = ran.length
            const answer = await send(age)
            expect(answer.status).toBe(200)
            expect(ran.length - before).toBe(age <= maxAgeMs ? 1 : 0)
            expect(answer.json.error?.code).toBe(age <= maxAgeMs ? undefined : 'too_old')
          },
        ),
        { numRuns: 60 },
      )
    } finally {
      vi.useRealTimers()
    }
  })
})
