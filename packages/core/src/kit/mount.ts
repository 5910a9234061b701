import { withoutTrailingSlashes } from '../http/paths.js'

/** The OAuth routes' paths under their mount. */
export const OAUTH_PATHS: readonly string[] = ['/login', '/callback', '/disconnect']

/** A mount path as given (`/auth/scheduling/`) in the form the kit compares (`/auth/scheduling`). */
export const normalMount = withoutTrailingSlashes

/**
 * A request's path and query under a mount the framework did not strip (Koa's `prefix`,
 * Fastify's register prefix, `routes.fetch`): the path inside it, or `undefined` off it.
 * `mount` is normalised (`normalMount`).
 */
export function underMount(url: string, mount: string): string | undefined {
  const query = url.indexOf('?')
  const pathname = query < 0 ? url : url.slice(0, query)
  if (pathname !== mount && !pathname.startsWith(`${mount}/`)) return undefined
  const inside = url.slice(mount.length)
  return inside === '' || inside.startsWith('?') ? `/${inside}` : inside
}

/**
 * The mount path, as sent, of a request whose full path is `full` and whose path inside the
 * mount is `inner` (for a framework that strips its mount and does not say what it was): the
 * segments of `full` before as many as `inner` has. Counted in segments, not characters, since
 * one of them may be percent-encoded (`%6Cogin`) and the other not.
 */
export function mountPathOf(full: string, inner: string): string {
  const depth = inner.split('/').length - 1
  let end = full.length
  for (let i = 0; i < depth && end > 0; i++) end = full.lastIndexOf('/', end - 1)
  return end <= 0 ? '' : full.slice(0, end)
}

/**
 * Where the OAuth routes are mounted, from the redirect URI: its path without the last segment
 * (`/auth/scheduling` for `https://app.example.com/auth/scheduling/callback`, and for
 * `…/callback/`).
 */
export function redirectMount(redirectUri: string): string {
  const path = withoutTrailingSlashes(new URL(redirectUri).pathname)
  return path.slice(0, path.lastIndexOf('/'))
}
