/** The longest delay a timer holds (2^31 - 1 ms, 24.8 days): past it, Node fires at once. */
export const LONGEST_TIMER_MS = 2_147_483_647

/**
 * Resolves after `ms` milliseconds; at once (on the next timer turn) for a time already past or
 * not a number: Node 24 warns on a negative delay (`TimeoutNegativeWarning`) and on NaN. A
 * delay past what a timer holds waits that long, not none.
 */
export const sleep = (ms: number): Promise<void> =>
  // NaN must wait 0 too: Math.max(NaN, 0) is NaN.
  new Promise<void>((resolve) => setTimeout(resolve, ms > 0 ? Math.min(ms, LONGEST_TIMER_MS) : 0))
