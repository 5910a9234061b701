/**
 * Resolves after `ms` milliseconds; at once (on the next timer turn) for a time already past:
 * Node 24 warns (`TimeoutNegativeWarning`) on a negative delay.
 */
export const sleep = (ms: number): Promise<void> =>
  new Promise<void>((resolve) => setTimeout(resolve, ms > 0 ? ms : 0))
