import { expect, it } from 'vitest'
import { FreshRecords } from '../../src/tokens/fresh.js'
import type { TokenRecord } from '../../src/tokens/record.js'

const record = (key: string): TokenRecord => ({
  accessToken: `at_${key}`,
  refreshToken: `rt_${key}`,
  expiresAt: 10_000_000,
  tokenType: 'bearer',
})

it('past its bound the kept records drop the one set longest ago, not all of them', () => {
  const now = 0
  const kept = new FreshRecords(() => now, true, 50)
  for (let i = 0; i < 50; i++) kept.set(`k${i}`, record(`k${i}`), 1_000_000)
  // Each new key pushes out exactly the oldest: the 49 newer ones stay readable.
  for (let i = 50; i < 1_050; i++) {
    kept.set(`k${i}`, record(`k${i}`), 1_000_000)
    expect(kept.entries.size).toBe(50)
    expect(kept.get(`k${i - 50}`)).toBeUndefined()
    expect(kept.get(`k${i - 49}`)?.accessToken).toBe(`at_k${i - 49}`)
  }
  // A key set again (a refresh) counts as new: it outlives those set before it.
  kept.set('k1001', record('k1001'), 2_000_000)
  for (let i = 0; i < 49; i++) kept.set(`n${i}`, record(`n${i}`), 1_000_000)
  expect(kept.get('k1001')?.accessToken).toBe('at_k1001')
  expect(kept.get('k1002')).toBeUndefined()
  kept.close()
})
