import { createHmac } from 'node:crypto'
import { MemoryDedupeStore, parseEnvelope, verifySignature } from '@scheduling-kit/core'
import { type Case, measure, ratio, type Target, table } from './harness.js'

/**
 * The default dedupe store once full (every delivery evicts the oldest id), against the rest of
 * the in-process pipeline for one delivery: verifying and parsing a signed 2 KiB body.
 */
export async function dedupeBench(): Promise<Target[]> {
  const body = JSON.stringify({
    type: 'event.created',
    id: 'payload_01HYBENCH',
    payload: { description: 'x'.repeat(1900) },
  })
  const secret = 'whsec_bench'
  const header = `sha256=${createHmac('sha256', secret).update(body).digest('hex').toUpperCase()}`
  const store = new MemoryDedupeStore()
  const DEFAULT_DEDUPE_ENTRIES = store.maxEntries
  let n = 0
  for (; n < DEFAULT_DEDUPE_ENTRIES; n++) {
    store.claim(`payload_${n}`, 'o')
    store.complete(`payload_${n}`, 'o')
  }
  const cases: Case[] = [
    {
      name: 'verify + parse a signed 2 KiB delivery',
      async: true,
      run: async () => {
        if (!(await verifySignature(body, header, secret))) throw new Error('not verified')
        return parseEnvelope(body)
      },
    },
    {
      name: `dedupe claim + complete, store full (${DEFAULT_DEDUPE_ENTRIES} ids)`,
      run: () => {
        const key = `payload_${n++}`
        store.claim(key, 'o')
        store.complete(key, 'o')
      },
    },
  ]
  const results = await measure(cases)
  table('in-memory dedupe once full', results, cases[0]!.name)
  if (store.size !== DEFAULT_DEDUPE_ENTRIES) throw new Error('the store is not bounded')
  return [
    {
      what: 'dedupe claim + complete (full store) / verify + parse',
      ratio: ratio(results, cases[1]!.name, cases[0]!.name),
      limit: 0.5,
      kind: 'max',
    },
  ]
}
