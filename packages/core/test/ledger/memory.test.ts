import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LedgerEntry } from '../../src/ledger/entry.js'
import { MemoryLedgerStore } from '../../src/ledger/memory.js'

// The memory store bounded in bytes: entries, bodies and marks counted by their text; past
// the bound a body is not kept, then handled entries make room, then a delivery is refused.

const entry = (n: number, overrides: Partial<LedgerEntry> = {}): LedgerEntry => ({
  id: `payload_${n}`,
  payloadId: `payload_${n}`,
  type: 'event.created',
  source: 'webhook',
  status: 'done',
  attempts: 1,
  receivedAt: 1_000 + n,
  updatedAt: 1_000 + n,
  ...overrides,
})

const body = 'x'.repeat(2_048)

describe('MemoryLedgerStore bounded in bytes', () => {
  it('5,000 handled deliveries of 2 KiB under a 1 MiB bound: never past it, the newest kept, the oldest made room', async () => {
    const store = new MemoryLedgerStore({ maxBytes: 1024 * 1024 })
    let most = 0
    for (let n = 0; n < 5_000; n++) {
      expect(await store.write(entry(n, { body, bodyExpiresAt: 9e15 }), undefined)).toBe(1)
      most = Math.max(most, store.bytes)
    }
    expect(most).toBeLessThanOrEqual(1024 * 1024)
    expect(store.size).toBeLessThan(5_000)
    expect(await store.get('payload_4999')).toBeDefined()
    expect(await store.get('payload_0')).toBeUndefined()
  })

  it('failed entries are never made room from: past the bound, a body is not kept, then store_full names maxBytes', async () => {
    const store = new MemoryLedgerStore({ maxBytes: 64 * 1024 })
    let n = 0
    let capped = 0
    await expect(
      (async () => {
        for (; ; n++) {
          await store.write(
            entry(n, { status: 'failed', body, bodyExpiresAt: 9e15, account: 'a' }),
            undefined,
          )
          if ((await store.get(`payload_${n}`))?.bodyCapped === true) capped++
        }
      })(),
    ).rejects.toMatchObject({ code: 'store_full', message: expect.stringMatching(/maxBytes/) })
    expect(capped).toBeGreaterThan(0)
    expect(store.bytes).toBeLessThanOrEqual(64 * 1024)
    // Nothing was forgotten: every failed entry written is still there.
    for (let i = 0; i < n; i++) expect(await store.get(`payload_${i}`)).toBeDefined()
  })

  it('what it counts goes back to zero once entries, bodies and marks are purged, whatever the writes (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            n: fc.integer({ min: 0, max: 30 }),
            body: fc.option(fc.string({ maxLength: 300 }), { nil: undefined }),
            error: fc.option(fc.string({ maxLength: 600 }), { nil: undefined }),
            mark: fc.boolean(),
          }),
          { maxLength: 60 },
        ),
        async (steps) => {
          const store = new MemoryLedgerStore({ maxBytes: 16 * 1024 })
          for (const { n, body: text, error, mark } of steps) {
            const current = await store.get(`payload_${n}`)
            const next = entry(n, {
              ...(text === undefined ? {} : { body: text, bodyExpiresAt: 9e15 }),
              ...(error === undefined ? {} : { lastError: error }),
            })
            try {
              await store.write(next, current?.version)
            } catch (e) {
              expect((e as { code?: string }).code).toBe('store_full')
            }
            if (mark) {
              const m = await store.mark(`event_${n}`)
              await store.setMark(
                { resourceId: `event_${n}`, at: n, rank: 1, by: `payload_${n}`, appliedAt: 0 },
                m?.version,
              )
            }
            expect(store.bytes).toBeLessThanOrEqual(16 * 1024 + 1_024 + 600)
          }
          await store.purge({ bodiesBefore: 9e15, entriesBefore: 9e15, marksBefore: 1 })
          expect(store.size).toBe(0)
          expect(store.bytes).toBe(0)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('maxBytes is checked at set-up', () => {
    expect(() => new MemoryLedgerStore({ maxBytes: 0 })).toThrow(/maxBytes/)
    expect(() => new MemoryLedgerStore({ maxBytes: 1.5 })).toThrow(/maxBytes/)
  })
})
