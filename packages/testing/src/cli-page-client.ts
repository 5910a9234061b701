// The CLI's requests to an app's delivery page: JSON reads, form posts with the anti-forgery
// token a read set, and what a refusal means, in words.

/** A request to the page, asking for JSON: its status, its body parsed, the cookie it set. */
export async function call(
  url: string,
  headers: Record<string, string>,
  init: RequestInit = {},
): Promise<{ status: number; body: unknown; cookie?: string }> {
  const res = await fetch(url, {
    ...init,
    redirect: 'manual',
    headers: {
      accept: 'application/json',
      ...headers,
      ...(init.headers as Record<string, string>),
    },
  })
  const text = await res.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  const cookie = res.headers.get('set-cookie')?.split(';', 1)[0]
  return { status: res.status, body, ...(cookie === undefined ? {} : { cookie }) }
}

/** Says why the page refused; the exit code, 1. */
export function refused(status: number): number {
  console.error(
    status === 403
      ? 'The page refused (403): pass what its authorize function checks, with --header.'
      : `The page answered ${status}.`,
  )
  return 1
}

/** A form post to the page, with the anti-forgery token its read `read` set. */
export function post(
  page: string,
  headers: Record<string, string>,
  read: { cookie?: string },
  form: Record<string, string>,
) {
  const token = read.cookie?.split('=')[1] ?? ''
  const cookie = [headers.cookie, read.cookie].filter(Boolean).join('; ')
  return call(page, headers, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ ...form, csrf: token }).toString(),
  })
}
