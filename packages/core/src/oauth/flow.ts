import type { OAuthFlowErrorCode } from '../error-codes.js'
import { OAuthFlowError } from '../errors.js'
import type { OAuthResponse } from './options.js'

/** Runs `step`; any failure becomes an `OAuthFlowError` of `code`, the original as its cause. */
export async function step<T>(
  code: OAuthFlowErrorCode,
  message: (cause: unknown) => string,
  run: () => T | Promise<T>,
): Promise<T> {
  try {
    return await run()
  } catch (cause) {
    throw new OAuthFlowError(code, message(cause), { cause })
  }
}

/** A redirect that no cache keeps, setting `cookies`. */
export function redirect(location: string, cookies: string[] = [], status = 302): OAuthResponse {
  return {
    status,
    headers: { location, 'cache-control': 'no-store', 'set-cookie': cookies },
    body: '',
  }
}
