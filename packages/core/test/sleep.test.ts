import { expect, it } from 'vitest'
import { sleep } from '../src/sleep.js'

it('sleep with a time already past, or not a number, resolves without a warning (Node 24 warns on a negative or NaN delay)', async () => {
  const warnings: string[] = []
  const listen = (warning: Error) => warnings.push(warning.name)
  process.on('warning', listen)
  try {
    await sleep(-250)
    await sleep(Number.NaN)
    await sleep(0)
    // The check can fail: a negative delay handed to setTimeout itself is warned about here.
    await new Promise((resolve) => setTimeout(resolve, -1))
    await new Promise((resolve) => setImmediate(resolve))
  } finally {
    process.off('warning', listen)
  }
  expect(warnings).toEqual(['TimeoutNegativeWarning'])
})

it('a delay past what a timer holds waits, not fires at once (Node would, with a TimeoutOverflowWarning)', async () => {
  const warnings: string[] = []
  const listen = (warning: Error) => warnings.push(warning.name)
  process.on('warning', listen)
  let done = false
  void sleep(30 * 86_400_000).then(() => {
    done = true
  })
  await new Promise((resolve) => setTimeout(resolve, 20))
  process.off('warning', listen)
  expect(done).toBe(false)
  expect(warnings).toEqual([])
})
