import { Agent, createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A small round-robin HTTP proxy, standing for the load balancer in front of the instances. */
export async function startProxy(): Promise<{
  url: string
  server: Server
  setTargets(ports: number[]): void
  hits: Map<number, number>
}> {
  let targets: number[] = []
  let next = 0
  const hits = new Map<number, number>()
  // A fresh connection per request: reusing a kept-alive one races the instance closing it
  // once idle (Node's keepAliveTimeout, 5 s), and the request then fails with ECONNRESET,
  // a 502 that says nothing of the app. Likelier on a loaded machine, where rounds are slow.
  const agent = new Agent({ keepAlive: false })
  const server = createServer((req, res) => {
    if (targets.length === 0) return void res.writeHead(503).end('no instance')
    const port = targets[next++ % targets.length]!
    hits.set(port, (hits.get(port) ?? 0) + 1)
    const upstream = request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      // Says why, for the demo's failure lines: the instance and the system's reason.
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' })
      res.end(`proxy: instance on port ${port} failed: ${error.code ?? error.message}`)
    })
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    setTargets: (ports) => {
      targets = ports
    },
    hits,
  }
}
