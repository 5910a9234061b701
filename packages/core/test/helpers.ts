import { createHmac } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import fc from 'fast-check'
import type { WebhookHandler } from '../src/webhooks/contract.js'

// A date of today (UTC): a delivery's time within any horizon the handler refuses past (maxAgeMs).
export const TODAY = new Date().toISOString().slice(0, 10)

/**
 * Serves a core webhook handler on loopback the way an adapter does: the Node request stream
 * goes to `handle()` untouched; a path that is not the handler's reaches the "app" (404 text).
 */
export async function serveHandler(
  handler: Pick<WebhookHandler, 'handle'>,
): Promise<{ url: string; close(): Promise<void>; appHits: () => number }> {
  let appHits = 0
  const server: Server = createServer(async (req, res) => {
    const answer = await handler.handle({
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body: req,
    })
    if (answer === undefined) {
      appHits++
      res.writeHead(404, { 'content-type': 'text/plain' }).end('app route')
      return
    }
    res.writeHead(answer.status, answer.headers).end(answer.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    appHits: () => appHits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * Serves a Fetch face on loopback (as Workers, Deno or a Next.js route would call it): each Node
 * request becomes a Fetch `Request` with its body streamed, the `Response` written back.
 */
export async function serveFetch(
  fetchFn: (request: Request) => Promise<Response>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const method = req.method ?? 'GET'
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(name, value)
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method,
      headers,
      ...(method === 'GET' || method === 'HEAD'
        ? {}
        : { body: Readable.toWeb(req) as ReadableStream, duplex: 'half' }),
    } as RequestInit)
    const answer = await fetchFn(request)
    res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(await answer.text())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Secrets of any shape a property tries: 16 to 40 characters of a base64-ish alphabet, untrimmed never. */
export const secretText = () =>
  fc
    .string({ minLength: 16, maxLength: 40, unit: fc.constantFrom(...'abcdefXYZ0123456789_-+/=') })
    .filter((s) => s.trim() === s)

/** Signs like the service, independently of the code under test. */
export function sign(body: string | Uint8Array, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex').toUpperCase()}`
}

let counter = 0
export function envelope(type = 'event.created', extra: Record<string, unknown> = {}) {
  counter++
  return {
    type,
    id: `payload_${Date.now().toString(36)}${counter}`,
    version: '2020-11-18',
    occurred_at: `${TODAY}T14:03:22Z`,
    payload: { id: `event_${counter}`, state: 'confirmed' },
    ...extra,
  }
}

/** A JSON answer of the handler (or, off its path, the app's text). */
export interface AnswerBody {
  received?: boolean
  duplicate?: boolean
  error: { code: string; message: string }
}

export interface PostOptions {
  secret?: string
  signature?: string | null
  webhookId?: string | null
  contentType?: string | null
  method?: string
  path?: string
}

/** POSTs a body as the service would: JSON, signed, with the webhook id header. */
export async function deliver(
  baseUrl: string,
  body: string | Uint8Array,
  options: PostOptions = {},
): Promise<{ status: number; json: AnswerBody; headers: Headers }> {
  const headers: Record<string, string> = {
    'user-agent': 'Service Webhooks (https://example.test)',
  }
  if (options.contentType !== null)
    headers['content-type'] = options.contentType ?? 'application/json'
  if (options.signature !== null) {
    headers['x-service-signature'] =
      options.signature ?? sign(body, options.secret ?? 'test-secret')
  }
  if (options.webhookId !== null) headers['x-service-webhook-id'] = options.webhookId ?? 'wh_123'
  const res = await fetch(baseUrl + (options.path ?? '/webhooks/scheduling'), {
    method: options.method ?? 'POST',
    headers,
    body: options.method === 'GET' || options.method === 'HEAD' ? undefined : (body as BodyInit),
  })
  const text = await res.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = text
  }
  return { status: res.status, json: json as AnswerBody, headers: res.headers }
}

/** A store call from another thread or process (fixtures/remote-store.mjs). */
export interface StoreCall {
  type: 'store'
  id: number
  method: string
  args: unknown[]
}

/** Runs a remote store call on the real store and returns the answer to send back. */
export async function answerStoreCall(
  store: object,
  { id, method, args }: StoreCall,
): Promise<{ id: number; result?: unknown; error?: string }> {
  try {
    const fn = (store as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!
    return { id, result: await fn.apply(store, args) }
  } catch (error) {
    return { id, error: String(error) }
  }
}
