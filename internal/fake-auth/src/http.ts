import type { IncomingMessage, ServerResponse } from 'node:http'

/** A JSON answer that no cache keeps. */
export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res
    .writeHead(status, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      ...headers,
    })
    .end(JSON.stringify(body))
}

/** A request's body as text, refused past `limit` characters. */
export async function readText(req: IncomingMessage, limit = 64 * 1024): Promise<string> {
  let text = ''
  for await (const chunk of req) {
    text += chunk
    if (text.length > limit) throw new Error('body too large')
  }
  return text
}
