import { describe, expect, it } from 'vitest'
import { type DedupeStore, MemoryDedupeStore } from '../../src/claims/dedupe.js'
import { checkHealth, runCheck } from '../../src/health/health.js'
import { MemorySubscriptionStore } from '../../src/subscriptions/store.js'
import { createWebhookSubscriptions } from '../../src/subscriptions/subscriptions.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import { attachWebhookMethods, type WebhookMethods } from '../../src/webhooks/methods.js'

const SECRET = 'whsec_health_0123456789'

/** A dedupe store whose health() does what `health` does. */
function storeWith(health: DedupeStore['health']): DedupeStore {
  const inner = new MemoryDedupeStore()
  return {
    claim: (k, o) => inner.claim(k, o),
    complete: (k, o) => inner.complete(k, o),
    release: (k, o) => inner.release(k, o),
    health,
  }
}

describe('health()', () => {
  it('the handler asks its dedupe store, its queue and its subscriptions’ store', async () => {
    const subscriptions = createWebhookSubscriptions({
      url: 'https://app.example.test/hooks',
      tokens: { getAccessToken: async () => 'token' },
      apiUrl: 'http://127.0.0.1:9/v1',
      store: new MemorySubscriptionStore(),
    })
    const handler = createWebhookHandler({
      subscriptions,
      queue: {
        enqueue() {},
        health: async () => ({ ok: true, checks: [{ name: 'redis', ok: true, ms: 1 }] }),
      },
    })
    const report = await handler.health()
    expect(report.ok).toBe(true)
    expect(report.checks.map((c) => [c.name, c.ok])).toEqual([
      ['dedupe.memory', true],
      ['queue.redis', true],
      ['subscriptions.store.memory', true],
    ])
  })

  it('a dependency that fails makes the report not ok, with its code or class, never its message', async () => {
    const refused = Object.assign(new Error('connect to redis://:hunter2@db failed'), {
      code: 'ECONNREFUSED',
    })
    const handler = createWebhookHandler(SECRET, {
      dedupe: storeWith(() => Promise.reject(refused)),
      queue: { enqueue() {}, health: () => Promise.reject(new TypeError('secret hunter2 here')) },
    })
    const report = await handler.health()
    expect(report.ok).toBe(false)
    expect(report.checks).toEqual([
      { name: 'dedupe', ok: false, ms: expect.any(Number), detail: 'ECONNREFUSED' },
      { name: 'queue', ok: false, ms: expect.any(Number), detail: 'TypeError' },
    ])
    expect(JSON.stringify(report)).not.toContain('hunter2')
  })

  it('a dependency that never answers fails after the time-out, saying so; the others still report', async () => {
    const handler = createWebhookHandler(SECRET, {
      dedupe: storeWith(() => new Promise(() => {})),
    })
    const report = await checkHealth(
      { webhooks: handler, tokens: new MemoryTokenStore(), plain: {}, absent: undefined },
      { timeoutMs: 50 },
    )
    expect(report.ok).toBe(false)
    expect(report.checks.map((c) => [c.name, c.ok, c.detail])).toEqual([
      ['webhooks.dedupe', false, 'no answer within 40 ms'],
      ['tokens.memory', true, 'in this process only'],
    ])
  })

  it('a component whose own checks hang is cut off by checkHealth and named', async () => {
    const report = await checkHealth(
      { stuck: { health: () => new Promise(() => {}) } },
      { timeoutMs: 20 },
    )
    expect(report).toEqual({
      ok: false,
      checks: [
        { name: 'stuck', ok: false, ms: expect.any(Number), detail: 'no answer within 20 ms' },
      ],
    })
  })

  it('an adapter’s middleware answers its handler’s health()', async () => {
    const handler = createWebhookHandler(SECRET, {
      dedupe: storeWith(() => Promise.reject(Object.assign(new Error('x'), { code: 'EPIPE' }))),
    })
    interface Middleware extends WebhookMethods<Middleware> {}
    const middleware = attachWebhookMethods<Middleware>(() => {}, handler)
    // The same report, but for how long each check took: timings differ between two calls (a
    // loaded machine gave 4 ms and 0 ms).
    const timeless = (r: Awaited<ReturnType<typeof handler.health>>) => ({
      ...r,
      checks: r.checks.map(({ ms: _, ...check }) => check),
    })
    expect(timeless(await middleware.health())).toEqual(timeless(await handler.health()))
    expect((await checkHealth({ webhooks: middleware })).checks.map((c) => c.name)).toEqual([
      'webhooks.dedupe',
    ])
  })

  it('runCheck: a note when ok; a scheduling-kit error is told in its own words', async () => {
    expect(await runCheck('x', () => 'fine')).toMatchObject({ name: 'x', ok: true, detail: 'fine' })
    const handler = createWebhookHandler(SECRET)
    const { ConfigError } = await import('../../src/errors/errors.js')
    expect(
      await runCheck('y', () => {
        throw new ConfigError('Set the table option.')
      }),
    ).toMatchObject({ ok: false, detail: 'Set the table option.' })
    expect((await handler.health()).ok).toBe(true)
  })
})
