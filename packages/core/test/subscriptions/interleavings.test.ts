// A model of the webhook API in memory, and every interleaving fast-check's scheduler finds of
// two instances ensuring, rotating and reconciling one account while the API fails now and
// then: whatever the order, one reconcile afterwards leaves exactly one working webhook that
// the store knows, and nothing else at the app's url.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MemorySubscriptionStore, type SubscriptionStore } from '../../src/subscriptions/store.js'
import { createWebhookSubscriptions } from '../../src/subscriptions/subscriptions.js'

const URL_ = 'https://app.example.test/webhooks/scheduling'

interface ModelWebhook {
  id: string
  url: string
  secret: string
  state: 'active' | 'disabled'
}

type Fault = 'none' | 'create-lost' | 'create-500' | 'delete-500' | '429'

/** The API as a map, answering through the scheduler; `faults` are used up in order. */
function modelApi(s: fc.Scheduler, faults: Fault[]) {
  const hooks = new Map<string, ModelWebhook>()
  let next = 1
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    s.schedule(
      Promise.resolve(
        new Response(JSON.stringify(body), {
          status,
          headers: { 'content-type': 'application/json', ...headers },
        }),
      ),
      `${status}`,
    )
  const fetch = async (input: string, init?: RequestInit): Promise<Response> => {
    const url = new URL(input)
    const method = init?.method ?? 'GET'
    const id = /\/webhooks\/([^/?]+)/.exec(url.pathname)?.[1]
    const fault = faults.shift() ?? 'none'
    if (fault === '429') return answer(429, { error: 'slow down' }, { 'retry-after': '0' })
    if (method === 'POST') {
      if (fault === 'create-500') return answer(500, { error: 'server_error' })
      const made = {
        id: `wh_${next++}`,
        url: URL_,
        secret: `secret_${next}`,
        state: 'active' as const,
      }
      hooks.set(made.id, made)
      if (fault === 'create-lost') return answer(502, { error: 'bad gateway' })
      return answer(201, made)
    }
    if (method === 'DELETE') {
      if (fault === 'delete-500') return answer(500, { error: 'server_error' })
      const gone = hooks.get(id!)
      hooks.delete(id!)
      return gone ? answer(200, { ...gone, state: 'deleted' }) : answer(404, { error: 'not_found' })
    }
    if (id !== undefined) {
      const one = hooks.get(id)
      return one ? answer(200, { ...one, secret: undefined }) : answer(404, { error: 'not_found' })
    }
    const entries = [...hooks.values()].map((w) => ({ ...w, secret: undefined }))
    return answer(200, { entries, metadata: { before: null, after: null, limit: 100 } })
  }
  return { fetch, hooks }
}

/** The store with each call's answer released by the scheduler. */
function scheduledStore(s: fc.Scheduler, store: SubscriptionStore): SubscriptionStore {
  return {
    get: s.scheduleFunction((k: string) => store.get(k)),
    compareAndSet: s.scheduleFunction((k, r, v) => store.compareAndSet(k, r, v)),
    delete: s.scheduleFunction((k: string, v: number) => store.delete(k, v)),
    findByWebhook: (id) => store.findByWebhook(id),
    keys: () => store.keys(),
    acquireLease: s.scheduleFunction((k: string, o: string, t: number) =>
      store.acquireLease(k, o, t),
    ),
    releaseLease: s.scheduleFunction((k: string, o: string) => store.releaseLease(k, o)),
  }
}

const op = fc.constantFrom('ensure', 'rotate', 'reconcile', 'disable')

describe('subscriptions under every interleaving', () => {
  it('property: after the dust settles and one reconcile, exactly one working webhook, known to the store', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 1 }), op), { minLength: 1, maxLength: 5 }),
        fc.array(
          fc.constantFrom<Fault>('none', 'none', 'create-lost', 'create-500', 'delete-500', '429'),
          {
            maxLength: 12,
          },
        ),
        async (s, ops, faults) => {
          const api = modelApi(s, faults)
          const shared = new MemorySubscriptionStore()
          const instances = [0, 1].map(() =>
            createWebhookSubscriptions({
              url: URL_,
              tokens: { getAccessToken: async () => 'token' },
              apiUrl: 'https://api.example.test/v1',
              store: scheduledStore(s, shared),
              fetch: api.fetch,
              retry: { baseDelayMs: 0, maxDelayMs: 0 },
              cacheMs: 0,
              logger: { debug() {}, info() {}, warn() {}, error() {} },
            }),
          )
          const running = ops.map(([who, what]) => {
            if (what === 'disable') {
              for (const w of api.hooks.values()) w.state = 'disabled'
              return Promise.resolve()
            }
            return instances[who]![what]('acct').catch(() => {})
          })
          const faultFree = faults.every((f) => f === 'none')
          await s.waitFor(Promise.all(running))
          if (faultFree) {
            // Without faults, no instance ever leaves a webhook the store does not know, nor two live.
            const record = await shared.get('acct')
            const known = new Set(record?.webhooks.map((w) => w.id))
            expect([...api.hooks.keys()].filter((id) => !known.has(id))).toEqual([])
            expect(
              record?.webhooks.filter((w) => w.removedAt === undefined).length ?? 0,
            ).toBeLessThanOrEqual(1)
          }
          faults.length = 0
          await s.waitFor(instances[0]!.reconcile())
          if (!ops.some(([, what]) => what === 'ensure' || what === 'rotate')) {
            // Nobody asked for a webhook: there is none, and no record.
            expect(api.hooks.size).toBe(0)
            expect(await shared.get('acct')).toBeUndefined()
            return
          }
          const working = [...api.hooks.values()].filter((w) => w.state === 'active')
          expect(working, JSON.stringify([...api.hooks.values()])).toHaveLength(1)
          expect([...api.hooks.values()].every((w) => w.url === URL_)).toBe(true)
          const record = await shared.get('acct')
          const live = record!.webhooks.filter((w) => w.removedAt === undefined)
          expect(live.map((w) => w.id)).toEqual([working[0]!.id])
          expect(live[0]!.secret).toBe(working[0]!.secret)
        },
      ),
      { numRuns: 150, seed: 20_261_124 },
    )
  })
})
