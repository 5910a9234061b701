import { createHash, timingSafeEqual } from 'node:crypto'

/**
 * Whether a request's `Cookie` header holds cookie `name` with exactly `token`, compared in
 * constant time: the delivery page's `authorize`. An empty token opens nothing.
 */
export function hasAdminCookie(
  cookieHeader: string | string[] | undefined,
  name: string,
  token: string,
): boolean {
  if (token === '') return false
  const header = Array.isArray(cookieHeader) ? cookieHeader.join('; ') : (cookieHeader ?? '')
  const digest = (text: string) => createHash('sha256').update(text).digest()
  let found = false
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name)
      found = timingSafeEqual(digest(part.slice(eq + 1).trim()), digest(token)) || found
  }
  return found
}
