import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

describe('token manager memory', () => {
  it('touching 100k keys once leaves a bounded heap: per-key state is evicted', () => {
    const script = fileURLToPath(new URL('../fixtures/heap-child.mjs', import.meta.url))
    const out = execFileSync(process.execPath, ['--expose-gc', script, '20000', '100000'], {
      encoding: 'utf8',
    })
    const { before, afterWarmup, afterAll, trackedKeys } = JSON.parse(out) as {
      before: number
      afterWarmup: number
      afterAll: number
      trackedKeys: number
    }
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1)
    console.log(
      `heap: ${mb(before)} MB before, ${mb(afterWarmup)} MB after 20k keys, ${mb(afterAll)} MB after 100k keys; ${trackedKeys} keys tracked`,
    )
    // At most two generations of maxTrackedKeys (10 000).
    expect(trackedKeys).toBeLessThanOrEqual(20_000)
    // 80k more keys cost less than 3 MB: without eviction they cost about 20 MB.
    expect(afterAll - afterWarmup).toBeLessThan(3 * 1024 * 1024)
  })
})
