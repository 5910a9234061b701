// Group commit under every interleaving fast-check's scheduler picks: arrivals and the ends of
// writes in any order, writes failing at random. Each caller settles with the write that
// carried its item and never before; no item is written twice or skipped; groups keep the
// arrival order, hold at most maxSize, and at most maxInFlight writes run at once.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { GroupCommit } from '../../src/batching/group-commit.js'

describe('GroupCommit', () => {
  it('property: every add settles with the write that carried it, in order, within the bounds', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
        async (s, count, maxSize, maxInFlight, fails) => {
          const writes: { items: number[]; ok?: boolean }[] = []
          let inFlight = 0
          let most = 0
          const batch = new GroupCommit<number>(
            (items) => {
              const write: { items: number[]; ok?: boolean } = { items }
              writes.push(write)
              inFlight++
              most = Math.max(most, inFlight)
              const fail = fails[writes.length - 1] === true
              return s.schedule(Promise.resolve(), `write ${items.join(',')}`).then(() => {
                inFlight--
                write.ok = !fail
                if (fail) throw new Error(`write ${writes.length} failed`)
              })
            },
            maxSize,
            maxInFlight,
          )
          const settled: { item: number; ok: boolean; writeOk: boolean | undefined }[] = []
          const adds = Array.from({ length: count }, (_, item) =>
            s.schedule(Promise.resolve(), `arrive ${item}`).then(() =>
              batch.add(item).then(
                () => {
                  const w = writes.find((x) => x.items.includes(item))
                  settled.push({ item, ok: true, writeOk: w?.ok })
                },
                () => {
                  const w = writes.find((x) => x.items.includes(item))
                  settled.push({ item, ok: false, writeOk: w?.ok })
                },
              ),
            ),
          )
          await s.waitFor(Promise.all(adds))
          expect(settled).toHaveLength(count)
          // Each caller learned its own write's outcome, after that write ended.
          for (const x of settled) expect(x.writeOk).toBe(x.ok)
          const written = writes.flatMap((w) => w.items)
          expect([...written].sort((a, b) => a - b)).toEqual(
            Array.from({ length: count }, (_, i) => i),
          )
          expect(new Set(written).size).toBe(written.length)
          expect(writes.every((w) => w.items.length >= 1 && w.items.length <= maxSize)).toBe(true)
          expect(most).toBeLessThanOrEqual(maxInFlight)
          expect(batch.waiting).toBe(0)
        },
      ),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 300) },
    )
  })

  it('one at a time, each item is written at once and alone; under load, the next write carries what arrived meanwhile', async () => {
    const groups: number[][] = []
    let release: () => void = () => {}
    const batch = new GroupCommit<number>((items) => {
      groups.push(items)
      return new Promise<void>((r) => {
        release = r
      })
    })
    const first = batch.add(1)
    expect(groups).toEqual([[1]]) // written at once, not after a wait for company
    const rest = [2, 3, 4].map((n) => batch.add(n))
    expect(groups).toHaveLength(1)
    release()
    await first
    expect(groups).toEqual([[1], [2, 3, 4]])
    release()
    await Promise.all(rest)
  })

  it('a write that throws at once rejects only its own items; the next group is still written', async () => {
    let calls = 0
    const batch = new GroupCommit<string>((items) => {
      calls++
      if (items.includes('bad')) throw new Error('refused')
      return Promise.resolve()
    }, 1)
    await expect(batch.add('bad')).rejects.toThrow('refused')
    await expect(batch.add('good')).resolves.toBeUndefined()
    expect(calls).toBe(2)
  })

  it('the callers a write of several answered come back in one write, not the first alone', async () => {
    const groups: number[][] = []
    const releases: (() => void)[] = []
    const batch = new GroupCommit<number>((items) => {
      groups.push(items)
      return new Promise<void>((r) => releases.push(r))
    })
    const first = batch.add(0)
    // Three callers, each adding its next item as soon as its own write answered it: the
    // pattern of deliveries answered 200 and the next requests arriving.
    const caller = async (n: number) => {
      await batch.add(n)
      await batch.add(n + 10)
    }
    const callers = [1, 2, 3].map(caller)
    releases.shift()!() // [0] written: [1, 2, 3] go next, together
    await first
    expect(groups).toEqual([[0], [1, 2, 3]])
    releases.shift()!() // [1, 2, 3] written: their callers add 11, 12, 13 in this turn
    await new Promise<void>((r) => setImmediate(r))
    await new Promise<void>((r) => setImmediate(r))
    expect(groups).toEqual([[0], [1, 2, 3], [11, 12, 13]])
    releases.shift()!()
    await Promise.all(callers)
    // After a write of several, a lone item waits for the turn's end only; after a write of
    // one, the next is written at once again.
    const alone = batch.add(20)
    expect(groups.at(-1)).toEqual([11, 12, 13])
    await new Promise<void>((r) => setImmediate(r))
    expect(groups.at(-1)).toEqual([20])
    releases.shift()!()
    await alone
    const next = batch.add(21)
    expect(groups.at(-1)).toEqual([21])
    releases.shift()!()
    await next
  })
})
