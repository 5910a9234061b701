import { connect, createServer } from 'node:net'
import { signPayload } from '@scheduling-kit/core'

/**
 * A port free on 127.0.0.1 right now, below Linux's ephemeral range (32768-60999): a port the
 * kernel hands out for `listen(0)` can be taken by any process's next outgoing connection before
 * the caller listens on it; one drawn from 20000-32767 only by another caller of this function.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 12768)
    if (await listensOn(port)) return port
  }
  throw new Error('no free port found in 20000-32767 after 50 tries')
}

function listensOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

export interface Answer {
  status: number
  headers: Headers
  text: string
  json: {
    error?: { code: string; message: string }
    received?: boolean
    duplicate?: boolean
    [k: string]: unknown
  }
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text()
  let json: Answer['json'] = {}
  try {
    json = JSON.parse(text)
  } catch {}
  return { status: res.status, headers: res.headers, text, json }
}

export interface DeliverOptions {
  secret?: string
  signature?: string | null
  webhookId?: string | null
  contentType?: string | null
  method?: string
  /** More headers, sent as they are. */
  headers?: Record<string, string>
}

/** A request as the service sends it: JSON, signed, with the webhook id. */
export async function deliver(
  url: string,
  body: string | Uint8Array,
  options: DeliverOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = {
    'user-agent': 'Scheduling Webhooks (https://service.test)',
    ...options.headers,
  }
  if (options.contentType !== null)
    headers['content-type'] = options.contentType ?? 'application/json'
  if (options.signature !== null)
    headers['x-service-signature'] =
      options.signature ?? (await signPayload(body, options.secret ?? 'conformance-secret'))
  if (options.webhookId !== null)
    headers['x-service-webhook-id'] = options.webhookId ?? 'wh_conformance'
  const method = options.method ?? 'POST'
  return answer(
    await fetch(url, {
      method,
      headers,
      body: method === 'GET' || method === 'HEAD' ? undefined : (body as BodyInit),
    }),
  )
}

export async function request(url: string, init: RequestInit = {}): Promise<Answer> {
  return answer(await fetch(url, { redirect: 'manual', ...init }))
}

let n = 0
export function envelope(type = 'event.created', extra: Record<string, unknown> = {}): string {
  n++
  return JSON.stringify({
    type,
    id: `payload_conf${process.pid}x${n}`,
    version: '2020-11-18',
    occurred_at: new Date().toISOString(),
    payload: { id: `event_${n}`, state: 'confirmed', description: 'Café ☕ <b>' },
    ...extra,
  })
}

/** `name=value` pairs of the Set-Cookie headers, for a Cookie header. */
export function cookieHeader(headers: Headers): string {
  return headers
    .getSetCookie()
    .map((c) => c.split(';', 1)[0]!)
    .filter((c) => !c.endsWith('='))
    .join('; ')
}

/**
 * Sends the request head and the first part of a body, then nothing more: a stalled client.
 * Resolves with what the server wrote and whether it closed the connection, once it closes or
 * `waitMs` passes.
 */
export function stalledRequest(
  url: string,
  head: string,
  partialBody: string,
  waitMs: number,
): Promise<{ response: string; closed: boolean; ms: number }> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const socket = connect(Number(port), hostname)
    let response = ''
    const finish = (closed: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ response, closed, ms: performance.now() - started })
    }
    const timer = setTimeout(() => finish(false), waitMs)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      response += chunk
    })
    socket.on('end', () => finish(true))
    socket.on('close', () => finish(true))
    socket.on('error', reject)
    socket.write(head + partialBody)
  })
}

/**
 * Sends one request exactly as written (`head` without its blank line, then `body`) on a new
 * connection, with `Connection: close`, and resolves with the status and the whole answer once
 * the server closes. For what `fetch` would change on the way: leading white space in a header
 * value, bytes that are not Latin-1, a header of a megabyte.
 */
export function rawExchange(
  url: string,
  headers: string[],
  body: string | Uint8Array = '',
): Promise<{ status: number; response: string }> {
  const { hostname, port, pathname } = new URL(url)
  const bytes = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body)
  const head =
    `POST ${pathname} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nconnection: close\r\n` +
    `content-length: ${bytes.length}\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      const response = Buffer.concat(chunks).toString('latin1')
      resolve({ status: Number(response.slice(9, 12)), response })
    })
    socket.write(Buffer.concat([Buffer.from(head, 'latin1'), bytes]))
  })
}
