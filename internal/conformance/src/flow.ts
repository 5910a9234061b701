import type { Started } from './context.js'
import { cookieHeader, request } from './http.js'

/** A browser's sign-in: `/login`, the consent page's answer, then the callback with the cookie. */
export async function connect(
  app: Started,
  query = '',
): Promise<{ back: Awaited<ReturnType<typeof request>>; cookie: string; callback: URL }> {
  const login = await request(`${app.base}/auth/scheduling/login${query}`)
  const cookie = cookieHeader(login.headers)
  const consent = await request(login.headers.get('location')!)
  const callback = new URL(consent.headers.get('location')!)
  const back = await request(callback.toString(), { headers: { cookie } })
  return { back, cookie, callback }
}
