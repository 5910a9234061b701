/**
 * Resolves after `ms` milliseconds; at once (on the next timer turn) for a time already past or
 * not a number: Node 24 warns on a negative delay (`TimeoutNegativeWarning`) and on NaN.
 */
export const sleep = (ms: number): Promise<void> =>
  // biome-ignore lint/complexity/useMathMinMax: NaN must wait 0 too; Math.max(NaN, 0) is NaN.
  new Promise<void>((resolve) => setTimeout(resolve, ms > 0 ? ms : 0))
