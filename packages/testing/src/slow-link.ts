import { connect, createServer, type Socket } from 'node:net'

// A slow network between an app and its store, for fault tests: a TCP proxy on loopback that
// holds every chunk, both ways, for a while before passing it on. What a store's client sends
// (Redis commands, PostgreSQL messages) arrives as sent, in order, only later.

/** Where a slow link leads, and how slow it is. */
export interface SlowLinkOptions {
  /** The server behind it: `host:port`, or a URL with a host and port (`redis://127.0.0.1:6379`). */
  to: string
  /** How long each chunk is held, each way, in ms: a round trip takes twice as long or more. */
  delayMs: number
  /**
   * Up to this many ms more, drawn for each chunk (default 0): connections then overtake one
   * another, as a pool's do on a real network. Within one connection the bytes keep their order.
   */
  jitterMs?: number
}

/** A running slow link: connect to `port` on 127.0.0.1 instead of the server. */
export interface SlowLink {
  port: number
  /** `url` with its host and port made the link's (the rest, a database name say, kept). */
  through(url: string): string
  /** Closes the link and cuts every connection through it. */
  stop(): void
}

/** The host and port `to` names. Its text is never in the error: a URL may hold a password. */
function hostAndPort(to: string): { host: string; port: number } {
  let url: URL | undefined
  try {
    url = new URL(to.includes('://') ? to : `tcp://${to}`)
  } catch {
    // URL's own error keeps the text it was given (as `input`).
  }
  const port = Number(url?.port)
  if (url === undefined || url.hostname === '' || !Number.isInteger(port) || port <= 0)
    throw new TypeError('startSlowLink: `to` names no host and port.')
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port }
}

/**
 * What passes chunks on to `to`, each `held()` ms after it came but never before the chunks that
 * came before it: one timer at a time, for the chunk at the head.
 */
function delayed(to: Socket, held: () => number): (chunk: Buffer) => void {
  const queue: Array<[due: number, chunk: Buffer]> = []
  let timer: ReturnType<typeof setTimeout> | undefined
  const flush = () => {
    timer = undefined
    while (queue.length > 0 && queue[0]![0] <= performance.now()) {
      const [, chunk] = queue.shift()!
      if (!to.destroyed) to.write(chunk)
    }
    if (queue.length > 0) timer = setTimeout(flush, queue[0]![0] - performance.now())
  }
  return (chunk) => {
    const last = queue.length > 0 ? queue[queue.length - 1]![0] : 0
    queue.push([Math.max(performance.now() + held(), last), chunk])
    timer ??= setTimeout(flush, queue[0]![0] - performance.now())
  }
}

/**
 * Starts a TCP proxy to `to` on a free loopback port that delays every chunk by `delayMs`.
 *
 * @example
 * ```ts
 * const link = await startSlowLink({ to: process.env.REDIS_URL!, delayMs: 20 })
 * const client = new Redis(link.through(process.env.REDIS_URL!)) // each command 40 ms or more
 * ```
 */
export async function startSlowLink(options: SlowLinkOptions): Promise<SlowLink> {
  const { host, port } = hostAndPort(options.to)
  const { delayMs, jitterMs = 0 } = options
  if (!(delayMs >= 0 && jitterMs >= 0 && Number.isFinite(delayMs + jitterMs)))
    throw new TypeError('startSlowLink: delayMs and jitterMs must be 0 or more.')
  const held = () => delayMs + Math.random() * jitterMs
  const sockets = new Set<Socket>()
  const server = createServer((inbound) => {
    const outbound = connect(port, host)
    sockets.add(inbound).add(outbound)
    inbound.on('data', delayed(outbound, held))
    outbound.on('data', delayed(inbound, held))
    const close = () => {
      for (const socket of [inbound, outbound]) {
        socket.destroy()
        sockets.delete(socket)
      }
    }
    for (const socket of [inbound, outbound]) socket.on('close', close).on('error', close)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const linkPort = (server.address() as { port: number }).port
  return {
    port: linkPort,
    through(url) {
      const moved = new URL(url)
      moved.hostname = '127.0.0.1'
      moved.port = String(linkPort)
      return moved.toString()
    },
    stop() {
      server.close()
      for (const socket of sockets) socket.destroy()
    },
  }
}
