// The CLI against a hostile (or mis-pointed) server, as OS processes: what it prints is clean
// whatever the server sends (keys and non-string values included), and every listing stops at
// its page bound with a clear message instead of following endless pages.
import { spawn } from 'node:child_process'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, expect, it } from 'vitest'

const CLI = new URL('../bin/scheduling-kit.js', import.meta.url).pathname
const closers: Array<() => void> = []
afterEach(() => {
  for (const close of closers.splice(0)) close()
})

function cli(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** A server answering JSON from `answer`, counting its requests. */
async function serve(answer: (req: IncomingMessage) => unknown) {
  let hits = 0
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    hits++
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer(req)))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  closers.push(() => {
    server.closeAllConnections()
    server.close()
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits }
}

/** A control character other than the line feed, DEL, or a bidirectional override. */
const raw = (text: string) =>
  [...text].some((c) => {
    const code = c.codePointAt(0)!
    return (code < 0x20 && c !== '\n') || code === 0x7f || c === '\u202e'
  })

const ESC = '\u001b]0;owned\u0007\u001b[2J'

it('deliveries show and list print nothing raw: hostile keys, non-string attempts and times, nested values', async () => {
  const hostile = {
    id: `payload_x${ESC}`,
    type: 'event.created',
    status: 'dead',
    attempts: `3${ESC}`,
    source: 'webhook',
    receivedAt: `yesterday${ESC}`,
    [`key${ESC}\u202e`]: 'value',
    nested: { [`inner${ESC}`]: [`deep${ESC}`] },
  }
  const page = await serve((req) =>
    new URL(req.url!, 'http://x').searchParams.has('id')
      ? { entry: hostile }
      : { entries: [hostile] },
  )
  const show = await cli(['deliveries', 'show', 'payload_x', '--page', page.url])
  expect(show.code).toBe(0)
  expect(show.stdout).toContain('key')
  expect(raw(show.stdout)).toBe(false)
  const list = await cli(['deliveries', 'list', '--page', page.url])
  expect(list.code).toBe(0)
  expect(list.stdout).toContain('yesterday')
  expect(raw(list.stdout)).toBe(false)
  const json = await cli(['deliveries', 'show', 'payload_x', '--page', page.url, '--json'])
  expect(raw(json.stdout)).toBe(false)
  expect(Object.keys(JSON.parse(json.stdout).entry ?? JSON.parse(json.stdout))).toContain(
    `key${ESC}\u202e`,
  )
}, 60_000)

it('deliveries list stops at --max-pages (default 100) on endless pages, and at once on a cursor seen before', async () => {
  let n = 0
  const endless = await serve(() => ({ entries: [], next: `c${n++}` }))
  const bounded = await cli(['deliveries', 'list', '--page', endless.url, '--max-pages', '5'])
  expect(bounded.code).toBe(0)
  expect(endless.hits()).toBe(5)
  expect(bounded.stderr).toContain('Stopped after 5 pages')
  expect(bounded.stderr).toContain('--max-pages')
  const byDefault = await cli(['deliveries', 'list', '--page', endless.url])
  expect(endless.hits()).toBe(105)
  expect(byDefault.stderr).toContain('Stopped after 100 pages')
  const looping = await serve(() => ({ entries: [], next: 'same' }))
  const loop = await cli(['deliveries', 'list', '--page', looping.url])
  expect(looping.hits()).toBe(2)
  expect(loop.stderr).toContain('loops')
  const usage = await cli(['deliveries', 'list', '--page', endless.url, '--max-pages', '0'])
  expect(usage.code).toBe(2)
}, 120_000)

it('webhooks list stops at --max-pages on endless pages, saying how to read further', async () => {
  let n = 0
  const api = await serve(() => ({
    entries: [],
    metadata: { after: `cursor_${n++}` },
  }))
  const run = await cli(['webhooks', 'list', '--api-url', api.url, '--max-pages', '7'], {
    SCHEDULING_TOKEN: 'pat_test',
  })
  expect(run.code).toBe(1)
  expect(api.hits()).toBe(7)
  expect(run.stderr).toContain('stopped after 7 pages')
  expect(run.stderr).toContain('--max-pages')
}, 60_000)

it('deliveries list reads a page answer of 16 MiB at most (a 64 MiB one stopped there, told), and gives up on one that never ends at its time-out', async () => {
  const chunk = Buffer.alloc(1024 * 1024, 0x20)
  let sent = 0
  const huge = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    const more = () => {
      while (sent < 64 && res.write(chunk)) sent++
      if (sent >= 64) res.end()
      else res.once('drain', more)
    }
    more()
  })
  const endless = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('{"entries": [')
  })
  for (const server of [huge, endless]) {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    closers.push(() => {
      server.closeAllConnections()
      server.close()
    })
  }
  const url = (s: typeof huge) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`
  const big = await cli(['deliveries', 'list', '--page', url(huge)])
  expect(big.code).toBe(1)
  expect(big.stderr).toContain('over 16777216 bytes')
  expect(sent).toBeLessThan(64) // the reading stopped: the rest was never sent
  const hung = await cli(['deliveries', 'list', '--page', url(endless)], {
    SCHEDULING_KIT_TIMEOUT_MS: '300',
  })
  expect(hung.code).toBe(1)
  expect(hung.stderr).toContain('did not answer in full within 300 ms')
}, 60_000)
