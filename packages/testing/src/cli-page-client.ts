// The CLI's requests to an app's delivery page: JSON reads, form posts with the anti-forgery
// token a read set, and what a refusal means, in words.

/** The most of a page's answer read: a page of the delivery page is a few hundred kB at most. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024
/** How long one request to the page may take, its answer read whole (`SCHEDULING_KIT_TIMEOUT_MS`). */
const REQUEST_TIMEOUT_MS = 30_000

const timeoutMs = (): number => {
  const set = Number(process.env.SCHEDULING_KIT_TIMEOUT_MS)
  return Number.isSafeInteger(set) && set > 0 ? set : REQUEST_TIMEOUT_MS
}

/**
 * A request to the page, asking for JSON: its status, its body parsed, the cookie it set.
 * Bounded: an answer past `MAX_ANSWER_BYTES`, or not done within 30 s (or
 * `SCHEDULING_KIT_TIMEOUT_MS`), is an
 * error saying so (never a process holding a body of any size, or waiting for ever).
 */
export async function call(
  url: string,
  headers: Record<string, string>,
  init: RequestInit = {},
): Promise<{ status: number; body: unknown; cookie?: string }> {
  const limit = timeoutMs()
  const signal = AbortSignal.timeout(limit)
  let text: string
  let res: Response
  try {
    res = await fetch(url, {
      ...init,
      redirect: 'manual',
      signal,
      headers: {
        accept: 'application/json',
        ...headers,
        ...(init.headers as Record<string, string>),
      },
    })
    text = await boundedText(res)
  } catch (error) {
    if (signal.aborted) throw new Error(`The page did not answer in full within ${limit} ms.`)
    throw error
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  const cookie = res.headers.get('set-cookie')?.split(';', 1)[0]
  return { status: res.status, body, ...(cookie === undefined ? {} : { cookie }) }
}

/** The answer's text, refused past `MAX_ANSWER_BYTES` (its reading stopped there). */
async function boundedText(res: Response): Promise<string> {
  const declared = Number(res.headers.get('content-length'))
  if (declared > MAX_ANSWER_BYTES) {
    await res.body?.cancel().catch(() => {})
    throw new Error(`The page's answer is ${declared} bytes, over ${MAX_ANSWER_BYTES}: not read.`)
  }
  if (res.body === null) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => {})
      throw new Error(`The page's answer is over ${MAX_ANSWER_BYTES} bytes: reading stopped there.`)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
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
