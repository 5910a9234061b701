import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createDeliveryLedger } from '../../src/catch-up/ledger.js'
import { MemoryDedupeStore } from '../../src/claims/dedupe.js'
import { ClaimRecord, type DeliveryOutcome, recordOf } from '../../src/claims/record.js'
import { ConfigError } from '../../src/errors/errors.js'
import { MemoryLedgerStore } from '../../src/ledger/memory.js'
import { runQueued } from '../../src/worker/run.js'

const delivery = (key: string) => ({
  envelope: { id: key, type: 'event.created' },
  key,
  text: '{}',
})
const CLAIM = { renewMs: 10_000, settleMs: 0 }

describe('ClaimRecord: the dedupe claim as a delivery record', () => {
  it('runs each key until a run succeeds, then answers done; a failure is rejected and lets the retry run (model)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c'), fails: fc.boolean() }), {
          maxLength: 40,
        }),
        async (arrivals) => {
          const record = new ClaimRecord(new MemoryDedupeStore(), CLAIM)
          const done = new Set<string>()
          for (const { key, fails } of arrivals) {
            let ran = false
            const run = () => {
              ran = true
              if (fails) throw new Error('handler failed')
            }
            if (done.has(key)) {
              expect(record.deliver(delivery(key), run)).toBe('done')
              expect(ran).toBe(false)
            } else if (fails) {
              // Rejected once the claim is released (a promise: the release may wait on the store).
              await expect(record.deliver(delivery(key), run)).rejects.toThrow('handler failed')
              expect(ran).toBe(true)
            } else {
              // Synchronous store and handlers: an answer, not a promise.
              expect(record.deliver(delivery(key), run)).toBe('ran')
              done.add(key)
            }
          }
        },
      ),
    )
  })

  it('concurrent arrivals of one key, in any interleaving: one runs, the others are busy or done, never two at once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 2, max: 6 }), async (s, copies) => {
        const record = new ClaimRecord(new MemoryDedupeStore(), CLAIM)
        let running = 0
        let most = 0
        let runs = 0
        const outcomes = Array.from({ length: copies }, () =>
          s.schedule(Promise.resolve()).then(() =>
            record.deliver(delivery('k'), async () => {
              runs++
              most = Math.max(most, ++running)
              await s.schedule(Promise.resolve())
              running--
            }),
          ),
        )
        await s.waitAll()
        const came = (await Promise.all(outcomes)) as DeliveryOutcome[]
        expect(runs).toBe(1)
        expect(most).toBe(1)
        expect(came.filter((c) => c === 'ran')).toHaveLength(1)
        for (const c of came) expect(['ran', 'busy', 'done']).toContain(c)
      }),
    )
  })

  it("claims a queue job's own id (jobKey) instead of the delivery's key", () => {
    const store = new MemoryDedupeStore()
    const record = new ClaimRecord(store, CLAIM)
    // The app's claim on the delivery's key completed when it enqueued the job.
    expect(record.handOff(delivery('k'), () => {})).toBe('ran')
    expect(record.deliver(delivery('k'), () => {})).toBe('done')
    let ran = 0
    expect(record.deliver(delivery('k'), () => void ran++, { jobKey: 'job-1' })).toBe('ran')
    expect(record.deliver(delivery('k'), () => void ran++, { jobKey: 'job-1' })).toBe('done')
    expect(ran).toBe(1)
  })

  it('without a store, every arrival runs (at least once), synchronously when the handlers are', async () => {
    const record = recordOf(undefined, undefined, CLAIM)
    let ran = 0
    expect(record.deliver(delivery('k'), () => void ran++)).toBe('ran')
    expect(record.deliver(delivery('k'), () => void ran++)).toBe('ran')
    await expect(record.deliver(delivery('k'), async () => void ran++)).resolves.toBe('ran')
    expect(ran).toBe(3)
  })

  it('recordOf chooses the ledger when there is one, whatever the dedupe store', () => {
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore() })
    expect(recordOf(ledger, new MemoryDedupeStore(), CLAIM)).toBe(ledger)
    expect(recordOf(undefined, new MemoryDedupeStore(), CLAIM)).toBeInstanceOf(ClaimRecord)
  })
})

describe('runQueued: a worker records through the same choice', () => {
  const data = {
    event: { id: 'pay_1', type: 'event.created', payload: {} },
    webhookId: undefined,
    secretIndex: 0,
    key: 'pay_1',
  } as never

  it("refuses a replay's job without a ledger, with or without a dedupe store, and runs nothing", async () => {
    let ran = 0
    const handler = { dispatch: async () => void ran++ }
    const replay = { ...(data as object), replay: { of: 'pay_1', reason: 'test' } } as never
    for (const dedupe of [undefined, new MemoryDedupeStore()])
      await expect(
        runQueued({ handler, dedupe, claimMs: 1_000 }, replay, 'j', false),
      ).rejects.toThrow(ConfigError)
    expect(ran).toBe(0)
  })

  it('with a dedupe store, a job runs once under its own id; a copy of the job is done', async () => {
    let ran = 0
    const handler = { dispatch: async () => void ran++ }
    const settings = { handler, dedupe: new MemoryDedupeStore(), claimMs: 1_000 }
    expect(await runQueued(settings, data, 'job-1', false)).toBe('ran')
    expect(await runQueued(settings, data, 'job-1', false)).toBe('done')
    expect(ran).toBe(1)
  })

  it('with the ledger, a job the live path ran already is done: one record for both paths', async () => {
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore() })
    let ran = 0
    const handler = { dispatch: async () => void ran++ }
    const event = { id: 'pay_2', type: 'event.created', payload: {} }
    expect(
      await ledger.deliver(
        { envelope: event, key: 'pay_2', text: JSON.stringify(event) },
        () => void ran++,
      ),
    ).toBe('ran')
    const job = { event, webhookId: undefined, secretIndex: 0, key: 'pay_2' } as never
    expect(await runQueued({ handler, ledger, claimMs: 1_000 }, job, 'job-2', false)).toBe('done')
    expect(ran).toBe(1)
  })
})
