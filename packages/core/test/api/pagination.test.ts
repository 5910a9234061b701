// Pagination trusts no server: a page over the page cap, an over-long cursor, a cursor or a
// page start seen before, and a page that trickles each end the list with an error; a list
// of ever-new cursors keeps no more than a fingerprint of each, whatever their length.
import { execFileSync } from 'node:child_process'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createSchedulingClient } from '../../src/api/client.js'
import { MAX_CURSOR_LENGTH, MAX_PAGE_BYTES } from '../../src/api/paginate.js'
import { isSchedulingError } from '../../src/errors/errors.js'

type Page = (after: string | null, req: IncomingMessage, res: ServerResponse) => void

async function listing(
  page: Page,
  run: (api: ReturnType<typeof createSchedulingClient>) => Promise<void>,
) {
  let requests = 0
  const server = createServer((req, res) => {
    requests++
    page(new URL(req.url ?? '/', 'http://x').searchParams.get('after'), req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const api = createSchedulingClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      token: 'pat_1',
      timeoutMs: 1_000,
      retry: { attempts: 1 },
    })
    await run(api)
    return requests
  } finally {
    server.closeAllConnections()
    server.close()
  }
}

const json = (res: ServerResponse, value: unknown) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value))

async function drain(api: ReturnType<typeof createSchedulingClient>) {
  let seen = 0
  const error = await (async () => {
    for await (const _ of api.webhooks.list()) seen++
  })().then(
    () => undefined,
    (e: unknown) => e,
  )
  return { seen, error: error as Error & { code?: string } }
}

describe('pagination bounded by bytes and by sense', () => {
  it('a cursor that comes back after other pages ends the list naming the loop', async () => {
    // A -> B -> C -> A: a ring of three cursors.
    const ring = ['A', 'B', 'C']
    const requests = await listing(
      (after, _req, res) => {
        const at = after === null ? 0 : ring.indexOf(after) + 1
        json(res, {
          entries: [{ id: `wh_${at}_${Math.random()}` }],
          metadata: { after: ring[at % 3] },
        })
      },
      async (api) => {
        const { seen, error } = await drain(api)
        expect(error?.code).toBe('invalid_response')
        expect(error.message).toMatch(/loops \(page 4's after cursor is the one page 1 gave\)/)
        expect(seen).toBe(4)
      },
    )
    expect(requests).toBe(4)
  })

  it('ever-new cursors over the same page end the list when the page repeats', async () => {
    let n = 0
    await listing(
      (_after, _req, res) =>
        json(res, { entries: [{ id: 'wh_same' }], metadata: { after: `c${n++}` } }),
      async (api) => {
        const { seen, error } = await drain(api)
        expect(error.message).toMatch(/page 2 starts where page 1 did/)
        expect(seen).toBe(1)
      },
    )
  })

  it('a cursor over the length cap is refused, not sent back (400 KB cursors)', async () => {
    let n = 0
    const requests = await listing(
      (_after, _req, res) =>
        json(res, {
          entries: [{ id: `wh_${n}` }],
          metadata: { after: `${n++}`.padEnd(400_000, 'x') },
        }),
      async (api) => {
        const { error } = await drain(api)
        expect(error.message).toContain(`400000 characters, over ${MAX_CURSOR_LENGTH}`)
      },
    )
    expect(requests).toBe(1)
  })

  it('a page over the page cap (a 10 MB page) is an error, read no further than the cap', async () => {
    let written = 0
    await listing(
      (_after, _req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' })
        const chunk = `{"id":"wh_${'x'.repeat(1000)}"},`
        const write = () => {
          while (written < 10_000_000) {
            written += chunk.length
            if (!res.write(chunk)) return void res.once('drain', write)
          }
          res.end('{}]}')
        }
        res.write('{"entries":[')
        write()
      },
      async (api) => {
        const { error } = await drain(api)
        expect(error?.code).toBe('invalid_response')
        expect(error.message).toContain(`larger than ${MAX_PAGE_BYTES} bytes`)
      },
    )
    expect(written).toBeLessThan(10_000_000)
  })

  it('a page that trickles ends at the time-out', async () => {
    await listing(
      (_after, _req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' })
        const timer = setInterval(() => res.write(' '), 50)
        res.on('close', () => clearInterval(timer))
      },
      async (api) => {
        const { error } = await drain(api)
        expect(error?.code).toBe('timeout')
      },
    )
  })

  it('a list of ever-new cursors stops at maxPages (default 1,000), and at timeoutMs on the clock it is given, with list_too_long after what it read', async () => {
    const endless: Page = (after, _req, res) => {
      const n = after === null ? 0 : Number(after) + 1
      json(res, { entries: [{ id: `wh_${n}` }], metadata: { after: String(n) } })
    }
    const byDefault = await listing(endless, async (api) => {
      const { seen, error } = await drain(api)
      expect(seen).toBe(1_000)
      expect(error.code).toBe('list_too_long')
      expect(error.message).toBe('GET /webhooks: stopped after 1000 pages, at maxPages 1000.')
    })
    expect(byDefault).toBe(1_000)
    const five = await listing(endless, async (api) => {
      let seen = 0
      const error = await (async () => {
        for await (const _ of api.webhooks.list({ maxPages: 5 })) seen++
      })().catch((e: Error & { code?: string }) => e)
      expect([seen, error?.code]).toEqual([5, 'list_too_long'])
    })
    expect(five).toBe(5)
    // The clock moves 10 s a page: a 35 s bound lets pages 1 to 4 be asked for.
    let clock = -10_000
    const tick = () => {
      clock += 10_000
      return clock
    }
    const timed = await listing(endless, async (api) => {
      let seen = 0
      const error = await (async () => {
        for await (const _ of api.webhooks.list({
          timeoutMs: 35_000,
          now: tick,
        }))
          seen++
      })().catch((e: Error & { code?: string }) => e)
      expect(seen).toBe(4)
      expect(error?.message).toContain('at timeoutMs 35000')
    })
    expect(timed).toBe(4)
    await listing(endless, async (api) => {
      await expect(
        api.webhooks.list({ maxPages: 0 })[Symbol.asyncIterator]().next(),
      ).rejects.toThrow(/maxPages must be/)
    })
  })

  it('10,000 ever-new 2 KiB cursors: the heap holds fingerprints, not cursors', () => {
    const script = fileURLToPath(new URL('../fixtures/pagination-heap-child.mjs', import.meta.url))
    const out = execFileSync(process.execPath, ['--expose-gc', script], { encoding: 'utf8' })
    const { seen, grew } = JSON.parse(out) as { seen: number; grew: number }
    expect(seen).toBe(10_000)
    // Kept cursors: 9,900 x 2 KiB = 20 MB at least.
    expect(grew, `the heap grew ${grew} bytes over 9,900 pages`).toBeLessThan(4_000_000)
  })

  it('property: any sequence of cursors either ends, or fails naming a loop or a bad cursor', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constantFrom('a', 'b', 'c', ''), fc.string({ maxLength: 3 })), {
          minLength: 1,
          maxLength: 12,
        }),
        async (cursors) => {
          let i = 0
          await listing(
            (_after, _req, res) => {
              const next = i < cursors.length ? cursors[i] : null
              i++
              json(res, { entries: [{ id: `wh_${i}` }], metadata: { after: next } })
            },
            async (api) => {
              const { seen, error } = await drain(api)
              const end = cursors.indexOf('')
              const used = end === -1 ? cursors : cursors.slice(0, end)
              const repeat = used.findIndex((c, k) => used.indexOf(c) !== k)
              if (repeat === -1) {
                expect(error).toBeUndefined()
                expect(seen).toBe(used.length + 1)
              } else {
                expect(isSchedulingError(error) && error.code).toBe('invalid_response')
                expect(error.message).toMatch(/loops/)
                expect(seen).toBe(repeat + 1)
              }
            },
          )
        },
      ),
      { numRuns: 40 },
    )
  })
})
