// The NestJS app as its users run it: compiled by tsc to CommonJS (dist/), started with `node`,
// on Node 22.12.0 (the oldest Node the packages support, fetched by the runtime matrix's cache)
// and on the Node that runs the tests. Real HTTP over loopback.
import { type ChildProcess, spawn } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { nodeBinary } from '@scheduling-kit/runtime-binaries'
import { afterAll, describe, expect, it } from 'vitest'

const dist = new URL('../dist/', import.meta.url)
const SECRET = 'whsec_nest_example'
const running: ChildProcess[] = []
afterAll(() => {
  for (const child of running) child.kill('SIGKILL')
})

/** Starts dist/main.js on `node`; resolves to its URL and what it wrote to stderr so far. */
function start(node: string): Promise<{ url: string; stderr: () => string }> {
  const child = spawn(node, [new URL('main.js', dist).pathname], {
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      SCHEDULING_SECRET: SECRET,
      SCHEDULING_CLIENT_ID: 'client_nest',
      SCHEDULING_CLIENT_SECRET: 'client_secret_nest',
      SCHEDULING_AUTH_URL: 'http://127.0.0.1:9',
      COOKIE_SECRET: 'cookie-secret-of-the-nest-example-32b',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.push(child)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
  return new Promise((resolve, reject) => {
    let stdout = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk) => {
      stdout += chunk
      const line = stdout.split('\n').find((l) => l.startsWith('{"port"'))
      if (line) resolve({ url: `http://127.0.0.1:${JSON.parse(line).port}`, stderr: () => stderr })
    })
    child.once('exit', (code) => reject(new Error(`the app exited (${code}): ${stderr}`)))
  })
}

function delivery(id: string) {
  const body = JSON.stringify({
    type: 'event.created',
    id,
    version: '2020-11-18',
    occurred_at: new Date().toISOString(),
    payload: { id: `evt_${id}` },
  })
  const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`
  return { body, signature }
}

const post = (url: string, body: string, signature: string) =>
  fetch(`${url}/webhooks/scheduling`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-signature': signature },
    body,
  })

it('is CommonJS that require()s the ESM-only package', () => {
  const main = readFileSync(new URL('main.js', dist), 'utf8')
  expect(main).toContain('"use strict"')
  expect(main).toMatch(/require\("@scheduling-kit\/express"\)/)
  expect(main).not.toMatch(/\bimport\(/)
})

const node22 = await nodeBinary('node22')
describe.each([
  ['Node 22.12.0', node22.path],
  [`the tests' Node (${process.version})`, process.execPath],
])('the NestJS app on %s', (_label, node) => {
  it('verifies a signed delivery after Nest parsed the body, refuses a forged one, keeps its own routes', async () => {
    if (node === undefined) throw new Error(`Node 22.12.0: ${node22.unavailable ?? node22.missing}`)
    const app = await start(node)
    const signed = delivery('payload_nest_1')
    expect((await post(app.url, signed.body, signed.signature)).status).toBe(200)
    const forged = delivery('payload_nest_forged')
    expect((await post(app.url, forged.body, `sha256=${'0'.repeat(64)}`)).status).toBe(401)
    // The same delivery again (the service's retry): answered, not handled twice.
    expect((await post(app.url, signed.body, signed.signature)).status).toBe(200)
    expect(await (await fetch(`${app.url}/deliveries`)).json()).toEqual([
      { type: 'event.created', id: 'payload_nest_1' },
    ])
    const note = await fetch(`${app.url}/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"text":"hello"}',
    })
    expect(note.status).toBe(201)
    expect(await note.json()).toEqual({ note: { text: 'hello' } })
    // The OAuth routes: a sign-in starts with a redirect to the service's consent page.
    const login = await fetch(`${app.url}/auth/scheduling/login`, { redirect: 'manual' })
    expect(login.status).toBe(302)
    expect(login.headers.get('location')).toMatch(/^http:\/\/127\.0\.0\.1:9\/oauth\/authorize\?/)
    // On stderr: the forged delivery's log line, and on Node 22.12 its note that require() of an
    // ES module is experimental there (later 22s and 24 do not print it); nothing else.
    const said = app
      .stderr()
      .split('\n')
      .filter((line) => line.trim() !== '')
    const warning = said.filter((line) =>
      /ExperimentalWarning|ES Module in require|--trace-warnings/.test(line),
    )
    expect(said.filter((line) => !warning.includes(line))).toEqual([
      expect.stringMatching(/^scheduling-kit: webhook answered 401 signature_invalid: /),
      '(Further signature_invalid answers are counted and reported once a minute.)',
    ])
    if (node !== node22.path) expect(warning).toEqual([])
  })
})
