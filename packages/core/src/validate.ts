import { ConfigError } from './errors/errors.js'

/**
 * The one check of a whole-number option (a limit, a time in ms, a count), for core, the stores
 * and the queue alike: the value, or `fallback` when it is not given; a `ConfigError` naming the
 * factory and the option otherwise.
 */
export function wholeNumber(
  who: string,
  name: string,
  value: unknown,
  fallback: number,
  { min = 1, unit }: { min?: number; unit?: string } = {},
): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new ConfigError(
      `${who}: ${name} must be a whole number${unit ? ` of ${unit}` : ''}, ${min} or more.`,
    )
  }
  return value
}
