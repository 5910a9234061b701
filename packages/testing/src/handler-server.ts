import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { WebhookHandler } from '@scheduling-kit/core'

// A webhook handler served on loopback, as an app would serve it: for the kits that send it
// real HTTP.

/** The server of `handler()` (read on each request), on `port` (0: a free one). */
export async function serveWebhooks(
  handler: () => WebhookHandler,
  port = 0,
): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const answer = await handler().handle({
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body: req,
    })
    if (answer === undefined) res.writeHead(404).end()
    else res.writeHead(answer.status, answer.headers).end(answer.body)
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const bound = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${bound}/webhooks/scheduling`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
