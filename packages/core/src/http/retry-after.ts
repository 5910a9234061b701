// The wait an answer asks for before the next request, read the same way for the API and the
// token endpoint.

/**
 * The wait a `Retry-After` header asks for, in ms: delay-seconds or an HTTP date (RFC 9110
 * section 10.2.3), or `undefined` when absent or unreadable. A date in the past is no wait.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined
  const value = header.trim()
  if (value.length > 64) return undefined
  if (/^\d+$/.test(value)) return Number(value) * 1000
  // An HTTP date names its day and month in letters: "-1" or "2" with junk is no date.
  if (!/^[A-Za-z]{3}, /.test(value)) return undefined
  const at = Date.parse(value)
  if (Number.isNaN(at)) return undefined
  return Math.max(0, at - now)
}
