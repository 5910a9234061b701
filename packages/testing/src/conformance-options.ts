// What every conformance battery of this kit is given: the test runner's `describe` and `it`.

type Body = () => Promise<void>

export interface StoreConformanceOptions {
  /** Your test runner's `describe` (vitest, node:test, jest, mocha). */
  describe: (name: string, fn: () => void) => unknown
  /** Your test runner's `it` / `test`. */
  it: (name: string, fn: Body) => unknown
  /** A name for the suite. Default `TokenStore conformance`. */
  name?: string
}
