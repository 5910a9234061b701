import fc from 'fast-check'
import { expect, it } from 'vitest'
import { createDeliveryLedger } from '../../src/catch-up/ledger.js'
import { MemoryLedgerStore } from '../../src/ledger/memory.js'
import type { LedgerStore } from '../../src/ledger/store.js'
import { ResourceTurns } from '../../src/ledger/turns.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import { envelope, sign } from '../helpers.js'

// Deliveries of one payload racing through the ledger, as a model: every store call and every
// handler's end is a step fast-check's scheduler orders, the lease may lapse at any point (the
// clock jumps past it), handlers fail or succeed as the run says. Whatever the order: no two
// handlers run at once on leases taken since the last lapse, and once every delivery settled,
// the entry says what the last run came to.

const SECRET = 'model-secret'
const LEASE = 1_000
const RUNS = Number(process.env.FUZZ_RUNS ?? 200)

it(
  'property: no two deliveries of one payload run at once on live leases, and the entry ends as the last run did',
  async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
        fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 2 }),
        async (s, fails, lapseAfter) => {
          let now = 1_000_000
          let epoch = 0
          const inner = new MemoryLedgerStore()
          const step =
            <A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>) =>
            async (...args: A): Promise<R> => {
              await s.schedule(Promise.resolve(), name)
              return fn(...args)
            }
          const store: LedgerStore = {
            get: step('get', (id: string) => inner.get(id)),
            write: step('write', (e, v) => inner.write(e, v)),
            list: (f) => inner.list(f),
            mark: step('mark', (r: string) => inner.mark(r)),
            setMark: step('setMark', (m, v) => inner.setMark(m, v)),
            purge: (p) => inner.purge(p),
          }
          const ledger = createDeliveryLedger({
            store,
            leaseMs: LEASE,
            maxAttempts: 10,
            now: () => now,
          })
          const running: number[] = []
          const outcomes: boolean[] = []
          let calls = 0
          let overlaps = 0
          const handler = createWebhookHandler({
            secret: SECRET,
            ledger,
            logger: { debug() {}, info() {}, warn() {}, error() {} },
            onAny: async () => {
              const fail = fails[calls++ % fails.length]!
              if (running.includes(epoch)) overlaps++
              const mine = epoch
              running.push(mine)
              try {
                await s.schedule(Promise.resolve(), fail ? 'handler fails' : 'handler succeeds')
                if (fail) throw new Error('handler failed')
              } finally {
                running.splice(running.indexOf(mine), 1)
                outcomes.push(!fail)
              }
            },
          })
          // No Event id: the three race through the store alone, as three processes would (one
          // process also queues deliveries of one Event in turn, tested in ledger.test.ts).
          const body = JSON.stringify(
            envelope('event.created', { payload: { state: 'confirmed' } }),
          )
          const id = JSON.parse(body).id as string
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
          const lapse = async (steps: number) => {
            for (let i = 0; i < steps; i++) await s.schedule(Promise.resolve(), 'time passes')
            await s.schedule(Promise.resolve(), 'lapse')
            now += LEASE + 1
            epoch++
          }
          const work = [request(), request(), request(), ...lapseAfter.map(lapse)]
          for (let turn = 0; s.count() < 3 + lapseAfter.length; turn++) {
            if (turn > 100) throw new Error('the requests never reached the ledger')
            await new Promise((r) => setTimeout(r, 1))
          }
          await s.waitFor(Promise.all(work))
          const order = () =>
            s
              .report()
              .map((t) => t.label)
              .join(', ')
          expect(overlaps, order()).toBe(0)
          const entry = await inner.get(id)
          expect(entry, order()).toBeDefined()
          expect(entry!.attempts, order()).toBeGreaterThanOrEqual(calls)
          // Without a lapse, runs are one after another: the entry says how the last ended.
          if (lapseAfter.length === 0 && outcomes.length > 0)
            expect(entry!.status, order()).toBe(outcomes[outcomes.length - 1] ? 'done' : 'failed')
          expect(['done', 'failed', 'processing']).toContain(entry!.status)
        },
      ),
      { numRuns: RUNS },
    )
  },
  Math.max(20_000, RUNS * 20),
)

it("a hold's renewal under way when its work ends lands before the release: the resource is free after, whatever the order the store answers in", async () => {
  // Found by the bench (ledgerbytes on PostgreSQL): a renewal that reached the store after the
  // release took the resource again, held until it lapsed (never, on a stopped clock).
  await fc.assert(
    fc.asyncProperty(fc.scheduler(), async (s) => {
      // Holds as the shared stores keep them (PostgreSQL's upsert, Redis's script): taken when
      // free, lapsed or already the owner's; given back (until 0) by the owner only.
      const holds = new Map<string, { owner: string; until: number }>()
      const holdResource = async (id: string, owner: string, until: number, now: number) => {
        const held = holds.get(id)
        if (until === 0) {
          if (held?.owner === owner) holds.delete(id)
          return true
        }
        if (held !== undefined && held.owner !== owner && held.until > now) return false
        holds.set(id, { owner, until })
        return true
      }
      const clock = 1_000_000
      const scheduled = {
        holdResource: (id: string, owner: string, until: number, now: number) =>
          s
            .schedule(Promise.resolve(), `hold ${until}`)
            .then(() => holdResource(id, owner, until, now)),
      } as unknown as LedgerStore
      const turns = new ResourceTurns({
        store: scheduled,
        leaseMs: 60_000,
        orderWaitMs: 0,
        now: () => clock,
      })
      const ran = turns.inTurn(
        'event_1',
        'delivery_1',
        async () => {
          // The lease timer fires while the handlers run, once or twice.
          turns.renew()
          await s.schedule(Promise.resolve(), 'handlers')
          turns.renew()
          return 'ran'
        },
        'busy',
      )
      await s.waitFor(ran)
      expect(await ran).toBe('ran')
      await s.waitAll()
      expect(turns.holding).toBe(0)
      // Another process's delivery of the Event takes it at once.
      expect(await holdResource('event_1', 'other', clock + 60_000, clock)).toBe(true)
    }),
    { numRuns: 200 },
  )
})

it("a hold's release the store refuses in a blip is tried again: the resource is free after, not held until its lease lapses", async () => {
  const holds = new Map<string, string>()
  let refusals = 2
  const store = {
    holdResource: async (id: string, owner: string, until: number) => {
      if (until === 0) {
        if (refusals-- > 0) throw new Error('connection reset')
        if (holds.get(id) === owner) holds.delete(id)
        return true
      }
      if (holds.has(id) && holds.get(id) !== owner) return false
      holds.set(id, owner)
      return true
    },
  } as unknown as LedgerStore
  // A stopped clock: nothing lapses, so only the release can free the resource.
  const turns = new ResourceTurns({ store, leaseMs: 60_000, orderWaitMs: 0, now: () => 1_000 })
  expect(await turns.inTurn('event_1', 'delivery_1', async () => 'ran', 'busy')).toBe('ran')
  expect(refusals).toBe(-1) // refused twice, then released
  expect(holds.size).toBe(0)
  expect(await turns.inTurn('event_1', 'delivery_2', async () => 'ran', 'busy')).toBe('ran')
})
