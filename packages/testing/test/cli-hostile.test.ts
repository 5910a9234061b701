// The CLI against a hostile API: nothing a server sends reaches the terminal raw (escape
// sequences, OSC titles, BEL, CR/LF, bidirectional overrides), and `list` streams its rows and
// stops at --limit however many pages the server has.
import { spawn } from 'node:child_process'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'

const CLI = new URL('../bin/scheduling-kit.js', import.meta.url).pathname
const closers: Array<() => void> = []
afterEach(() => {
  for (const close of closers.splice(0)) close()
})

function cli(args: string[], apiUrl: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, 'webhooks', ...args], {
      env: { ...process.env, SCHEDULING_API_URL: apiUrl, SCHEDULING_TOKEN: 'pat_cli' },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

async function api(answer: (path: string, after: string | null, res: ServerResponse) => void) {
  let requests = 0
  const server = createServer((req, res) => {
    requests++
    const url = new URL(req.url ?? '/', 'http://x')
    answer(url.pathname, url.searchParams.get('after'), res)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  closers.push(() => {
    server.closeAllConnections()
    server.close()
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests: () => requests,
  }
}

const json = (res: ServerResponse, status: number, value: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value))

/** Anything the terminal would act on; line feeds are the CLI's own and are dropped first. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u
const raw = (text: string) => UNSAFE.test(text.replaceAll('\n', ''))

const HOSTILE = [
  '\u001b[2J\u001b[Hwiped',
  '\u001b]0;owned window\u0007',
  'fake\r\nscheduling-kit: all good',
  'bell\u0007\u0007',
  'evil\u202egnp.exe',
  '\u009b31mcsi',
  'zero\u200bwidth\u2066iso\u2069',
]

describe('scheduling-kit webhooks against a hostile API', () => {
  it('cleans ids, states, dates and urls in the table and in JSON', async () => {
    const hooks = HOSTILE.map((text, i) => ({
      id: `wh_${i}${text}`,
      state: text,
      created_at: text,
      url: `https://x.test/${text}`,
      secret: text,
    }))
    const server = await api((path, _after, res) =>
      path.endsWith('/webhooks')
        ? json(res, 200, { entries: hooks, metadata: { after: null } })
        : json(res, 200, hooks[0]),
    )
    const table = await cli(['list'], server.url)
    expect(table.code).toBe(0)
    expect(raw(table.stdout)).toBe(false)
    expect(table.stdout.trim().split('\n')).toHaveLength(HOSTILE.length + 1)
    expect(table.stdout).toContain('wiped')
    const listed = await cli(['list', '--json'], server.url)
    expect(raw(listed.stdout)).toBe(false)
    // The JSON keeps the values whole: escaped, not dropped.
    expect(JSON.parse(listed.stdout)).toEqual(hooks)
    const got = await cli(['get', 'wh_0'], server.url)
    expect(raw(got.stdout)).toBe(false)
    const creating = await api((_path, _after, res) => json(res, 201, hooks[0]))
    const made = await cli(['create', 'https://app.example.test/h'], creating.url)
    expect(made.code).toBe(0)
    expect(raw(made.stdout)).toBe(false)
    expect(made.stdout.trim().split('\n')).toHaveLength(4)
  })

  it('cleans error bodies and messages on stderr', async () => {
    // Each hostile text on two paths of the CLI: a JSON error with field errors (422 prints the
    // fields), and a plain-text body (500 prints it as "The API said"); 401 once.
    const runs = HOSTILE.flatMap((text) => [422, 500].map((status) => [text, status] as const))
    runs.push([HOSTILE[0]!, 401])
    for (const [text, status] of runs) {
      const server = await api((_path, _after, res) =>
        status === 500
          ? res.writeHead(500, { 'content-type': 'text/plain' }).end(text.repeat(3))
          : json(res, status, { error: text, errors: { [text]: [text] } }),
      )
      const run = await cli(['delete', 'wh_1'], server.url)
      expect(run.code).toBe(1)
      expect(raw(run.stderr), run.stderr).toBe(false)
      expect(raw(run.stdout)).toBe(false)
    }
  }, 120_000)

  it('list streams the rows and stops at --limit (default 1000) on a list that never ends', async () => {
    let page = 0
    const server = await api((_path, _after, res) => {
      page++
      json(res, 200, {
        entries: Array.from({ length: 100 }, (_, i) => ({
          id: `wh_${page}_${i}`,
          url: 'https://x.test/',
        })),
        metadata: { after: `cursor_${page}` },
      })
    })
    const limited = await cli(['list', '--limit', '250'], server.url)
    expect(limited.code).toBe(0)
    expect(limited.stdout.trim().split('\n')).toHaveLength(251)
    expect(limited.stderr).toMatch(/Stopped after 250 webhooks: the account has more/)
    expect(server.requests()).toBe(3)
    const byDefault = await cli(['list', '--json'], server.url)
    expect(byDefault.code).toBe(0)
    expect(JSON.parse(byDefault.stdout)).toHaveLength(1000)
    expect(server.requests()).toBe(3 + 11)
    expect((await cli(['list', '--limit', '0'], server.url)).code).toBe(2)
  })
})
