import fc from 'fast-check'
import { expect, it } from 'vitest'
import { type DedupeStore, MemoryDedupeStore } from '../../src/claims/dedupe.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import { envelope, sign } from '../helpers.js'

// Deliveries of one payload racing through the handler, as a model: every dedupe call and
// every handler's end is a step fast-check's scheduler orders, a claim may lapse at any point
// (the clock jumps past the lease), and handlers fail or succeed as the run says. Whatever the
// order, a handler never starts while another runs on a claim taken since the last lapse: a
// late holder cannot free or finish the claim of the delivery that took over.

const SECRET = 'model-secret'
const LEASE = 1_000
/** Runs: `FUZZ_RUNS` (`pnpm fuzz` sets 20 000), and a time-out that grows with them. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300)

it(
  'property: no two deliveries of one payload run at once on live claims, whatever the interleaving',
  async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
        fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 2 }),
        async (s, fails, lapseAfter) => {
          let now = 0
          let epoch = 0
          const inner = new MemoryDedupeStore({ leaseMs: LEASE, now: () => now })
          const step =
            <A extends unknown[], R>(name: string, fn: (...args: A) => R) =>
            async (...args: A): Promise<R> => {
              await s.schedule(Promise.resolve(), name)
              return fn(...args)
            }
          const store: DedupeStore = {
            claim: step('claim', (k: string, o: string) => inner.claim(k, o)),
            complete: step('complete', (k: string, o: string) => inner.complete(k, o)),
            release: step('release', (k: string, o: string) => inner.release(k, o)),
          }
          const running: number[] = [] // the epoch each running handler started in
          let calls = 0
          let overlaps = 0
          const handler = createWebhookHandler({
            secret: SECRET,
            dedupe: store,
            onAny: async () => {
              const fail = fails[calls++ % fails.length]
              if (running.includes(epoch)) overlaps++
              const mine = epoch
              running.push(mine)
              try {
                await s.schedule(Promise.resolve(), fail ? 'handler fails' : 'handler succeeds')
                if (fail) throw new Error('handler failed')
              } finally {
                running.splice(running.indexOf(mine), 1)
              }
            },
          })
          const body = JSON.stringify(envelope())
          const request = () =>
            handler.handle({
              method: 'POST',
              path: '/webhooks/scheduling',
              headers: {
                'content-type': 'application/json',
                'x-service-signature': sign(body, SECRET),
              },
              body: Buffer.from(body),
            })
          // A lapse comes after some steps of its own, so the scheduler can place it anywhere.
          const lapse = async (steps: number) => {
            for (let i = 0; i < steps; i++) await s.schedule(Promise.resolve(), 'time passes')
            await s.schedule(Promise.resolve(), 'lapse')
            now += LEASE + 1
            epoch++
          }
          const lapses = lapseAfter.length
          const work = [request(), request(), request(), ...lapseAfter.map(lapse)]
          // Reading a request takes turns of the event loop: let all three reach their claim
          // before the scheduler releases any step, or they would run one after another.
          for (let turn = 0; s.count() < 3 + lapseAfter.length; turn++) {
            if (turn > 100) throw new Error('the requests never reached their claim')
            await new Promise((r) => setTimeout(r, 1))
          }
          await s.waitFor(Promise.all(work))
          const order = () =>
            s
              .report()
              .map((t) => t.label)
              .join(', ')
          expect(overlaps, order()).toBe(0)
          // Without a lapse, handlers run one at a time and a success is final.
          if (lapses === 0 && calls > 0 && !fails[calls - 1]) {
            const again = await s.waitFor(request())
            expect(JSON.parse(again!.body).duplicate, order()).toBe(true)
          }
        },
      ),
      { numRuns: RUNS },
    )
  },
  Math.max(20_000, RUNS * 10),
)
