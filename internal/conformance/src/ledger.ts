import { createDeliveryLedger, MemoryLedgerStore } from '@scheduling-kit/core'
import type { WebhookMethods } from '@scheduling-kit/core/adapter'
import { describe, expect, it } from 'vitest'
import type { SuiteContext } from './context.js'
import type { AdapterHarness } from './harness.js'
import { deliver, envelope } from './http.js'

// The ledger through each adapter: every body parser placement still records the verified
// bytes, a delivery that keeps failing becomes dead, and the middleware's `replay()` runs it
// again in process with `context.replay`.

const quiet = { debug() {}, info() {}, warn() {}, error() {} }

export function defineLedgerCases(harness: AdapterHarness, ctx: SuiteContext): void {
  if (!harness.configurable) return
  describe(`${harness.name}: the delivery ledger`, () => {
    it('a delivery failing maxAttempts times is dead, answered 200 after; the middleware replays it with context.replay and catches up from the API', async () => {
      const ledger = createDeliveryLedger({
        store: new MemoryLedgerStore(),
        maxAttempts: 2,
        logger: quiet,
      })
      let broken = true
      const replays: unknown[] = []
      let middleware: WebhookMethods<unknown> | undefined
      const app = await ctx.start({
        webhooks: {
          ledger,
          logger: quiet,
          onAny: (_event, context) => {
            replays.push(context.replay)
            if (broken) throw new Error('not yet')
          },
        },
        configure: (webhooks) => {
          middleware = webhooks as WebhookMethods<unknown>
        },
      })
      const body = envelope()
      const { id } = JSON.parse(body) as { id: string }
      expect((await deliver(app.hook, body)).status).toBe(500)
      expect((await deliver(app.hook, body)).status).toBe(500)
      const after = await deliver(app.hook, body)
      expect(after.status).toBe(200)
      expect((await ledger.get(id))?.status).toBe('dead')
      // The body kept is the verified bytes, whatever parser ran first.
      expect((await ledger.get(id))?.body).toBe(body)
      broken = false
      expect(await middleware!.replay(id, { reason: 'fixed' })).toMatchObject({ replayed: 1 })
      expect(replays).toEqual([undefined, undefined, { of: id, reason: 'fixed' }])
      expect((await ledger.get(id))?.status).toBe('done')
      // And catch-up through the middleware: a state listed by the API runs the handlers once.
      const listed = async function* () {
        yield { id: 'event_listed', state: 'canceled' }
      }
      const client = { events: { list: listed } }
      expect(await middleware!.catchUp({ client })).toMatchObject({ fed: 1, ran: 1 })
      expect(await middleware!.catchUp({ client })).toMatchObject({ fed: 0 })
      expect(replays).toHaveLength(4)
    })
  })
}
