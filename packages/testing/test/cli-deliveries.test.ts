// `scheduling-kit deliveries` against an app's delivery page, as OS processes: list, show and
// replay with the page's authorization; refused without it; nothing the ledger holds reaches
// the terminal raw (an error message full of escape sequences and line breaks).
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  createDeliveryLedger,
  createDeliveryPage,
  type DeliveryPage,
  MemoryLedgerStore,
} from '@scheduling-kit/core'
import { afterEach, expect, it } from 'vitest'

const CLI = new URL('../bin/scheduling-kit.js', import.meta.url).pathname
const closers: Array<() => void> = []
afterEach(() => {
  for (const close of closers.splice(0)) close()
})

function cli(args: string[]) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, 'deliveries', ...args])
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** Serves a delivery page on a port of its own; its address. */
async function servePage(page: DeliveryPage): Promise<string> {
  const server = createServer((req, res) => page.node(req, res))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  closers.push(() => {
    server.closeAllConnections()
    server.close()
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/admin/deliveries`
}

/** A control character other than the line feed, DEL, or a bidirectional override. */
const raw = (text: string) =>
  [...text].some((c) => {
    const code = c.codePointAt(0)!
    return (code < 0x20 && c !== '\n') || code === 0x7f || c === '\u202e'
  })

it('lists, shows and replays through the page with its authorization; refused without; hostile text cleaned', async () => {
  const store = new MemoryLedgerStore()
  const ledger = createDeliveryLedger({ store })
  const now = Date.now()
  const hostile = 'boom\u001b]0;owned\u0007\r\nfake line \u202eevil'
  await store.write(
    {
      id: 'payload_dead',
      payloadId: 'payload_dead',
      type: 'event.canceled',
      account: 'acct_1',
      source: 'webhook',
      status: 'dead',
      attempts: 3,
      lastError: hostile,
      receivedAt: now,
      updatedAt: now,
      body: '{}',
      bodyExpiresAt: now + 60_000,
    },
    undefined,
  )
  await store.write(
    {
      id: 'payload_done',
      payloadId: 'payload_done',
      type: 'event.created',
      source: 'webhook',
      status: 'done',
      attempts: 1,
      receivedAt: now - 1,
      updatedAt: now,
    },
    undefined,
  )
  const replays: string[] = []
  const page = createDeliveryPage(ledger, {
    authorize: (req) => req.headers.authorization === 'Bearer ops',
    replay: async (id) => {
      replays.push(id)
      return { planned: 1, replayed: 1, queued: 0, failed: 0, skipped: 0, problems: [] }
    },
  })
  const url = await servePage(page)
  const auth = ['--page', url, '--header', 'authorization: Bearer ops']

  const refused = await cli(['list', '--page', url])
  expect(refused.code).toBe(1)
  expect(refused.stderr).toContain('refused (403)')

  const list = await cli(['list', ...auth])
  expect(list.code).toBe(0)
  expect(list.stdout.split('\n')[0]).toMatch(/^STATUS\s+TRIES\s+TYPE/)
  expect(list.stdout).toContain('payload_dead')
  expect(list.stdout).toContain('payload_done')
  expect(raw(list.stdout)).toBe(false)
  expect(list.stdout.split('\n')).toHaveLength(4) // header, two rows, the final newline

  const dead = await cli(['list', ...auth, '--status', 'dead', '--json'])
  const listed = JSON.parse(dead.stdout) as { id: string; bodyKept: boolean; body?: string }[]
  expect(listed.map((e) => e.id)).toEqual(['payload_dead'])
  expect(listed[0]!.bodyKept).toBe(true)
  expect(listed[0]!.body).toBeUndefined()
  expect(raw(dead.stdout)).toBe(false)

  const show = await cli(['show', 'payload_dead', ...auth])
  expect(show.code).toBe(0)
  expect(show.stdout).toMatch(/status\s+dead/)

  const missing = await cli(['show', 'payload_nope', ...auth])
  expect(missing.code).toBe(1)
  expect(missing.stderr).toContain('No delivery payload_nope')

  const replay = await cli(['replay', 'payload_dead', ...auth])
  expect(replay.code).toBe(0)
  expect(replay.stdout.trim()).toBe('Replayed payload_dead.')
  expect(replays).toEqual(['payload_dead'])

  const usage = await cli(['replay', ...auth])
  expect(usage.code).toBe(2)
  expect(usage.stderr).toContain('replay needs the delivery id')
}, 120_000)

it("purges through the page: one account's bodies, then what retention says is over; refused without authorization", async () => {
  let now = 1_000_000
  const store = new MemoryLedgerStore()
  const ledger = createDeliveryLedger({
    store,
    retention: { bodyMs: 10_000, entryMs: 20_000 },
    now: () => now,
  })
  const entry = (id: string, account: string, receivedAt: number) => ({
    id,
    payloadId: id,
    type: 'event.created',
    account,
    source: 'webhook' as const,
    status: 'done' as const,
    attempts: 1,
    receivedAt,
    updatedAt: receivedAt,
    body: '{"secret":"personal"}',
    bodyExpiresAt: receivedAt + 10_000,
  })
  await store.write(entry('payload_a1', 'acct_a', now), undefined)
  await store.write(entry('payload_a2', 'acct_a', now), undefined)
  await store.write(entry('payload_b1', 'acct_b', now), undefined)
  const page = createDeliveryPage(ledger, {
    authorize: (req) => req.headers.authorization === 'Bearer ops',
  })
  const url = await servePage(page)
  const auth = ['--page', url, '--header', 'authorization: Bearer ops']

  const refused = await cli(['purge', '--page', url, '--account', 'acct_a'])
  expect(refused.code).toBe(1)
  expect((await store.get('payload_a1'))?.body).toBeDefined()

  const one = await cli(['purge', ...auth, '--account', 'acct_a'])
  expect(one.stdout.trim()).toBe('Purged 2 bodies, 0 marks and 0 entries of acct_a.')
  expect((await store.get('payload_a1'))?.body).toBeUndefined()
  expect((await store.get('payload_a2'))?.body).toBeUndefined()
  expect((await store.get('payload_b1'))?.body).toBeDefined()

  now += 15_000 // past the bodies' window, within the entries'
  const bodies = await cli(['purge', ...auth, '--json'])
  expect(bodies.code).toBe(0)
  expect(JSON.parse(bodies.stdout)).toEqual({ bodies: 1, entries: 0, marks: 0 })
  expect((await store.get('payload_b1'))?.status).toBe('done')
  now += 15_000 // past the entries' window too
  const all = await cli(['purge', ...auth, '--json'])
  expect(JSON.parse(all.stdout)).toEqual({ bodies: 0, entries: 3, marks: 0 })
  expect(await store.get('payload_b1')).toBeUndefined()

  const usage = await cli(['purge', 'payload_a1', ...auth])
  expect(usage.code).toBe(2)
}, 120_000)
