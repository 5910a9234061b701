const cookiesOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';', 1)[0]!)
    .filter((c) => !c.endsWith('='))

export interface OAuthFlowOptions {
  /** The account to approve as on the consent page. Default `acct_1`. */
  account?: string
  /** Press "Deny" instead of "Allow". */
  deny?: boolean
}

/**
 * Goes through an app's OAuth flow the way a browser does: its login URL, the fake service's
 * consent page (Allow, or Deny), the app's callback. Resolves to the callback's answer and the
 * cookies the app set, ready for a `cookie` header of later requests.
 *
 * @example
 * ```ts
 * const { cookie, callback } = await completeOAuthFlow('http://127.0.0.1:3000/auth/scheduling/login', {
 *   account: 'acct_1',
 * })
 * ```
 */
export async function completeOAuthFlow(
  loginUrl: string,
  options: OAuthFlowOptions = {},
): Promise<{ cookie: string; callback: Response }> {
  const login = await fetch(loginUrl, { redirect: 'manual' })
  const location = login.headers.get('location')
  if (login.status !== 302 || !location)
    throw new Error(`${loginUrl} answered ${login.status}, not a redirect`)
  const state = cookiesOf(login).join('; ')
  let step = await fetch(location, { redirect: 'manual' })
  if (step.status === 200) {
    const html = await step.text()
    const form = new URLSearchParams()
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
      form.set(
        m[1]!,
        m[2]!
          .replace(/&quot;/g, '"')
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&amp;/g, '&'),
      )
    }
    form.set('decision', options.deny ? 'deny' : 'allow')
    form.set('account', options.account ?? 'acct_1')
    step = await fetch(new URL('/oauth/authorize', step.url), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    })
  }
  const back = step.headers.get('location')
  if (!back) throw new Error(`the consent step answered ${step.status}, not a redirect`)
  const callback = await fetch(back, { redirect: 'manual', headers: { cookie: state } })
  return { cookie: cookiesOf(callback).join('; '), callback }
}
