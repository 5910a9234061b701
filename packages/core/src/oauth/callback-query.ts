import { OAuthFlowError } from '../errors/connection.js'
import { serverText } from '../errors/errors.js'

// What the callback's query says before anything is exchanged: the authorization server's
// refusal, and which server it came from. Its text was chosen by whoever crafted the link.

/**
 * Text from the callback's query, which whoever crafted the link chose: only the characters
 * RFC 6749 allows in `error` and `error_description` (printable ASCII but `"` and `\`), capped.
 */
function callbackText(text: string, max: number): string {
  return serverText(text.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, ' '), max)
}

/**
 * The error the authorization server sent back to the callback, if any. `access_denied` means
 * the account owner or the server refused (RFC 6749 section 4.1.2.1): the page says what the
 * server said, never that the user declined.
 */
export function serviceRefusal(url: URL): OAuthFlowError | undefined {
  const error = url.searchParams.get('error')
  if (error === null) return undefined
  const raw = url.searchParams.get('error_description')
  const description = raw === null ? '' : callbackText(raw, 200)
  const said = description === '' ? '' : ` It said: "${description}".`
  if (error === 'access_denied') {
    return new OAuthFlowError(
      'access_denied',
      `The authorization server did not grant access (access_denied).${said} Nothing was stored.`,
    )
  }
  return new OAuthFlowError(
    'authorization_failed',
    `The authorization server refused the authorization (${callbackText(error, 64) || 'no error code'}).${said} Nothing was stored.`,
  )
}

/**
 * RFC 9207: a callback that names its authorization server in `iss` must name the configured
 * one, or the code may be another server's (a mix-up attack). Without `iss`, nothing to check.
 */
export function checkIssuer(url: URL, issuers: readonly string[]): void {
  const all = url.searchParams.getAll('iss')
  if (all.length === 0) return
  // A parameter sent twice is refused (RFC 6749 section 3.1): which one counts is not ours to pick.
  if (all.length === 1 && issuers.includes(all[0]!)) return
  throw new OAuthFlowError(
    'issuer_mismatch',
    'The callback came from another authorization server than the one configured (its iss does not match). Nothing was stored.',
    {
      cause: new Error(
        `iss was "${callbackText(all.join(', '), 200)}", expected ${issuers.map((one) => `"${one}"`).join(' or ')} (set the issuer option to the server's issuer identifier).`,
      ),
    },
  )
}
