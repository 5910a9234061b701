import { createTokenManager, MemoryTokenStore } from '@scheduling-kit/core'
import { type Case, measure, ratio, type Target, table } from './harness.js'

export async function tokenBench(): Promise<Target[]> {
  const store = new MemoryTokenStore()
  const now = Date.now()
  await store.set('acct_1', {
    accessToken: 'at_bench',
    refreshToken: 'rt_bench',
    tokenType: 'bearer',
    expiresAt: now + 7_200_000,
    obtainedAt: now,
    account: { id: 'acct_1', name: 'Ada' },
  })
  const manager = createTokenManager({
    store,
    oauth: {
      refresh: () => {
        throw new Error('a fresh token must not be refreshed')
      },
    },
  })
  const cases: Case[] = [
    { name: 'bare store.get (MemoryTokenStore)', async: true, run: () => store.get('acct_1') },
    {
      name: 'getAccessToken, fresh token',
      async: true,
      run: () => manager.getAccessToken('acct_1'),
    },
  ]
  if ((await manager.getAccessToken('acct_1')) !== 'at_bench') throw new Error('unexpected token')
  const results = await measure(cases)
  table('getAccessToken on a fresh token', results, cases[0]!.name)
  return [
    {
      what: 'getAccessToken / bare store.get',
      ratio: ratio(results, cases[1]!.name, cases[0]!.name),
      limit: 2,
      kind: 'max',
    },
  ]
}
