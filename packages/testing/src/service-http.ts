import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'

// The fake service's own HTTP plumbing: JSON answers, refusals, bounded JSON bodies, and the
// checks that keep its control API to this machine.

export const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`

export function json(res: ServerResponse, status: number, body: unknown) {
  res
    .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    .end(JSON.stringify(body))
}

/** A control request refused before it is read: its status and what to do. */
export class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Reads a control request's JSON body. Only `application/json` is taken: a page on another
 * site can post a form (urlencoded, multipart, text/plain) here without asking, but not JSON.
 */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase()
  if (type !== 'application/json') {
    throw new Refused(415, 'The control API takes JSON only (content-type: application/json).')
  }
  let text = ''
  for await (const chunk of req) {
    text += chunk
    if (text.length > 256 * 1024) throw new Refused(413, 'body too large')
  }
  if (text === '') return {}
  const value = JSON.parse(text) as unknown
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Refused(400, 'The body must be a JSON object.')
  return value as Record<string, unknown>
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]'])

/** Whether a listening address is this machine's loopback only. */
export function isLoopback(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}

/**
 * Whether a `Host` header names this service: its own host, `localhost`, or an IP address, on
 * its port. A name that merely resolves here (DNS rebinding: a site's own name pointed at
 * 127.0.0.1) is refused, so another site's page cannot read or drive the service.
 */
export function isOwnHost(header: string | undefined, listenHost: string, port: number): boolean {
  if (header === undefined || !URL.canParse(`http://${header}`)) return false
  const url = new URL(`http://${header}`)
  if (url.port !== String(port) || url.username !== '' || url.pathname !== '/') return false
  const name = url.hostname
  return (
    name === listenHost ||
    name === 'localhost' ||
    /^\d{1,3}(\.\d{1,3}){3}$/.test(name) ||
    (name.startsWith('[') && name.endsWith(']'))
  )
}
