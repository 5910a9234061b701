const BASE = 'http://same-origin.invalid'

/**
 * `returnTo` as the path a browser would resolve it to (`/dashboard?tab=1`), if that path is
 * on this site; else `undefined`. The judgement is made on the resolved path, after the
 * browser's own clean-up (dot segments, `%2e`, backslashes, tabs and newlines removed), so
 * `/.//evil.test` or `/a/..//evil.test`, which resolve to `//evil.test`, are refused. The
 * value returned is already resolved: a browser resolves it to itself, on this origin.
 */
export function safeReturnTo(returnTo: string | null | undefined): string | undefined {
  if (typeof returnTo !== 'string' || returnTo.length === 0 || returnTo.length > 2048)
    return undefined
  // Only a path: not `//host`, `/\host`, a scheme or a relative path.
  if (returnTo[0] !== '/' || returnTo[1] === '/' || returnTo[1] === '\\') return undefined
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (/[\u0000-\u001f\u007f\\]/.test(returnTo)) return undefined
  let url: URL
  try {
    url = new URL(returnTo, BASE)
  } catch {
    return undefined
  }
  if (url.origin !== BASE) return undefined
  const resolved = url.pathname + url.search + url.hash
  // After dot-segment removal the path must still start with one slash and no more: `//x` or
  // `/\x` in a Location header is another host.
  if (resolved[0] !== '/' || resolved[1] === '/' || resolved[1] === '\\') return undefined
  // The browser resolves the answer again, against the page it is on: it must land here too,
  // on the same path.
  const again = new URL(resolved, `${BASE}/a/b/c`)
  if (again.origin !== BASE || again.pathname + again.search + again.hash !== resolved)
    return undefined
  return resolved
}
