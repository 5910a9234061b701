import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { connectionStamp, newConnection, rolledBackWhy } from '../../src/tokens/connection.js'

// A connection's generation orders connections: each new one is later than the one it replaces,
// whatever the clock says, and a record of an older generation is refused as rolled back.

const clock = fc.integer({ min: 0, max: 2 ** 45 })

describe('connection generations', () => {
  it('a new generation is later than the one it replaces, whatever the clock did meanwhile', () => {
    fc.assert(
      fc.property(fc.array(clock, { minLength: 1, maxLength: 20 }), (clocks) => {
        let previous: string | undefined
        for (const now of clocks) {
          const next = newConnection(previous, now)
          const stamp = connectionStamp(next)!
          expect(stamp).toBeGreaterThanOrEqual(now)
          if (previous !== undefined) expect(stamp).toBeGreaterThan(connectionStamp(previous)!)
          expect(rolledBackWhy({ connection: next }, connectionStamp(previous))).toBeUndefined()
          if (previous !== undefined) {
            expect(rolledBackWhy({ connection: previous }, stamp)).toMatch(/rolled back/)
          }
          previous = next
        }
      }),
    )
  })

  it('two connections made at the same instant differ (the cookie names one of them)', () => {
    expect(newConnection(undefined, 5)).not.toBe(newConnection(undefined, 5))
  })

  it('a generation with no stamp (an older record, or hostile text) is never ordered, never refused', () => {
    fc.assert(
      fc.property(fc.anything(), fc.option(clock, { nil: undefined }), (connection, newest) => {
        const stamp = connectionStamp(connection)
        if (stamp === undefined) {
          expect(rolledBackWhy({ connection: connection as string }, newest)).toBeUndefined()
        } else {
          expect(Number.isSafeInteger(stamp)).toBe(true)
        }
      }),
    )
    for (const hostile of ['', '.', 'zzzzzzzzzzzz.a', '1.', '1.a b', 'Z1.a', ' 1.a', 'abc']) {
      expect(connectionStamp(hostile)).toBeUndefined()
    }
  })

  it('the same generation is never rolled back (refreshes keep it)', () => {
    fc.assert(
      fc.property(clock, (now) => {
        const connection = newConnection(undefined, now)
        expect(rolledBackWhy({ connection }, connectionStamp(connection))).toBeUndefined()
      }),
    )
  })
})
