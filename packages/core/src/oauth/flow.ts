import type { OAuthFlowErrorCode } from '../errors/codes.js'
import { OAuthFlowError } from '../errors/connection.js'
import type { OAuthResponse } from './options.js'

/**
 * Runs `step`; any failure becomes an `OAuthFlowError` of `code`, the original as its cause. A
 * step made of steps passes their `OAuthFlowError` on as it is.
 */
export async function step<T>(
  code: OAuthFlowErrorCode,
  message: (cause: unknown) => string,
  run: () => T | Promise<T>,
): Promise<T> {
  try {
    return await run()
  } catch (cause) {
    if (cause instanceof OAuthFlowError) throw cause
    throw new OAuthFlowError(code, message(cause), { cause })
  }
}

/**
 * Headers of every answer of the routes: no cache keeps it, and no page it leads to learns its
 * address (a callback's address holds the code and the state) from `Referer`.
 */
export function privateHeaders(): Record<string, string | string[]> {
  return { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }
}

/** A redirect that no cache keeps and no Referer reveals, setting `cookies`. */
export function redirect(location: string, cookies: string[] = [], status = 302): OAuthResponse {
  return { status, headers: { ...privateHeaders(), location, 'set-cookie': cookies }, body: '' }
}
