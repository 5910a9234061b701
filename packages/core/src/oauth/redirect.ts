/**
 * `returnTo` if it is a path on this site (`/dashboard?tab=1`), else `undefined`. Refuses
 * anything a browser could resolve to another origin: `//host`, `/\host`, schemes, control
 * characters.
 */
export function safeReturnTo(returnTo: string | null | undefined): string | undefined {
  if (typeof returnTo !== 'string' || returnTo.length === 0 || returnTo.length > 2048)
    return undefined
  if (!returnTo.startsWith('/') || returnTo.startsWith('//') || returnTo.startsWith('/\\'))
    return undefined
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (/[\u0000-\u001f\u007f\\]/.test(returnTo)) return undefined
  const base = 'http://same-origin.invalid'
  try {
    const url = new URL(returnTo, base)
    return url.origin === base ? url.pathname + url.search + url.hash : undefined
  } catch {
    return undefined
  }
}
