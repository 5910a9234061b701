import { randomBytes } from 'node:crypto'
import type { TokenRecord } from '@scheduling-kit/core'

// What the token store battery's parts share: the records they write and compare, fresh keys.

export function record(overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    accessToken: `at_${randomBytes(6).toString('hex')}`,
    refreshToken: `rt_${randomBytes(6).toString('hex')}`,
    expiresAt: Date.now() + 7_200_000,
    tokenType: 'bearer',
    obtainedAt: Date.now(),
    account: { id: 'acct_1', name: 'Ada' },
    data: { plan: 'pro', tags: ['a', 'b'], nested: { n: 1 } },
    ...overrides,
  }
}

/** A record as stored, without the `version` a versioned store adds. */
export function plain(value: TokenRecord | undefined): TokenRecord | undefined {
  if (value === undefined) return undefined
  const { version: _, ...rest } = value
  return rest
}

export const key = (name: string) => `conformance:${name}:${randomBytes(4).toString('hex')}`
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
