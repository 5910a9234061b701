const cookiesOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';', 1)[0]!)
    .filter((c) => !c.endsWith('='))

export interface OAuthFlowOptions {
  /**
   * The account to approve as: typed on the consent page, and sent as `login_hint` so a
   * service that approves at once (`autoApprove`) connects this account too. Default: the
   * service's own choice (`acct_1` unless `auth.setAuthorize` named another).
   */
  account?: string
  /**
   * The app's own cookies (its session, say), sent with the login and the callback requests
   * besides the sign-in cookies, as a browser would: `"sid=abc; theme=dark"`.
   */
  cookie?: string
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
  const own = options.cookie ? { cookie: options.cookie } : undefined
  const login = await fetch(loginUrl, { redirect: 'manual', headers: own })
  const location = login.headers.get('location')
  if (login.status !== 302 || !location)
    throw new Error(`${loginUrl} answered ${login.status}, not a redirect`)
  const state = [options.cookie, ...cookiesOf(login)].filter(Boolean).join('; ')
  const authorize = new URL(location)
  if (options.account !== undefined) authorize.searchParams.set('login_hint', options.account)
  let step = await fetch(authorize, { redirect: 'manual' })
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
    if (options.account !== undefined) form.set('account', options.account)
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
