import { afterEach, describe, expect, it, vi } from 'vitest'
import { createDeliveryLedger } from '../../src/catch-up/ledger.js'
import { accountKey } from '../../src/claims/keys.js'
import { createCredentialCipher } from '../../src/credentials/cipher.js'
import { generateCredentialKey } from '../../src/credentials/keys.js'
import { sealBody } from '../../src/ledger/bodies.js'
import { MemoryLedgerStore } from '../../src/ledger/memory.js'
import type { LedgerStore } from '../../src/ledger/store.js'
import type { WebhookContext } from '../../src/webhooks/context.js'
import type { WebhookHandler } from '../../src/webhooks/contract.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import { queuedDelivery } from '../../src/worker/job.js'
import { runQueued } from '../../src/worker/run.js'
import { deliver, envelope, serveHandler } from '../helpers.js'

// A date of today (UTC): a delivery's time within any horizon the handler refuses past (maxAgeMs).
const TODAY = new Date().toISOString().slice(0, 10)

// The ledger through a real handler on loopback: every delivery recorded with its outcome,
// failures become dead letters, replays run in process with `context.replay`, the ordering
// guard keeps a late creation from undoing a cancellation, bodies sealed and expired.

const SECRET = 'test-secret'
const quiet = { debug() {}, info() {}, warn() {}, error() {} }
const servers: { close(): Promise<void> }[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

async function serve(handler: WebhookHandler) {
  const server = await serveHandler(handler)
  servers.push(server)
  return server
}

describe('the delivery ledger through the webhook handler', () => {
  it('records each delivery once; a retry of a handled one is a duplicate and runs nothing', async () => {
    const store = new MemoryLedgerStore()
    const ledger = createDeliveryLedger({ store })
    let runs = 0
    const handler = createWebhookHandler({ secret: SECRET, ledger, onAny: () => void runs++ })
    const { url } = await serve(handler)
    const body = JSON.stringify(envelope())
    expect((await deliver(url, body)).status).toBe(200)
    const again = await deliver(url, body)
    expect(again.status).toBe(200)
    expect(again.json.duplicate).toBe(true)
    expect(runs).toBe(1)
    const { entries } = await ledger.list()
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({
      status: 'done',
      attempts: 1,
      type: 'event.created',
      webhookId: 'wh_123',
      source: 'webhook',
    })
    expect(entries[0]!.body).toBe(body)
    expect(entries[0]!.resourceId).toMatch(/^event_/)
  })

  it('a delivery failing maxAttempts times is dead (onDeadLetter told once), answered 200 afterwards, and a replay runs it with context.replay', async () => {
    const ledger = createDeliveryLedger({
      store: new MemoryLedgerStore(),
      maxAttempts: 3,
      logger: quiet,
      onDeadLetter: (entry) => void dead.push(entry.id),
    })
    const dead: string[] = []
    let broken = true
    const seen: WebhookContext[] = []
    const handler = createWebhookHandler({
      secret: SECRET,
      ledger,
      logger: quiet,
      onAny: (_event, context) => {
        seen.push(context)
        if (broken) throw new Error('database down')
      },
    })
    const { url } = await serve(handler)
    const event = envelope()
    const body = JSON.stringify(event)
    for (let i = 0; i < 3; i++) expect((await deliver(url, body)).status).toBe(500)
    expect(dead).toEqual([event.id])
    const after = await deliver(url, body)
    expect(after.status).toBe(200)
    expect((after.json as { dead?: boolean }).dead).toBe(true)
    expect(seen).toHaveLength(3)
    const entry = await ledger.get(event.id)
    expect(entry).toMatchObject({ status: 'dead', attempts: 3 })
    expect(entry?.lastError).toMatch(/handler_failed.*Caused by Error: database down$/)

    broken = false
    const report = await handler.replay(event.id, { reason: 'fixed the database' })
    expect(report).toMatchObject({ planned: 1, replayed: 1, failed: 0, skipped: 0 })
    expect(seen).toHaveLength(4)
    expect(seen[3]!.replay).toEqual({ of: event.id, reason: 'fixed the database' })
    expect(seen[3]!.webhookId).toBe('wh_123')
    expect(await ledger.get(event.id)).toMatchObject({
      status: 'done',
      attempts: 4,
      source: 'replay',
    })
  })

  it('with a secret lookup (deliveries of no account): a dead delivery replays, its key and mark under its webhook identity, and a late creation does not undo a cancellation', async () => {
    const store = new MemoryLedgerStore()
    const ledger = createDeliveryLedger({ store, maxAttempts: 1, logger: quiet })
    let broken = true
    const seen: string[] = []
    const handler = createWebhookHandler({
      secret: (webhookId) => `secret-of-${webhookId}`,
      ledger,
      logger: quiet,
      onAny: (event) => {
        seen.push(event.type)
        if (broken) throw new Error('database down')
      },
    })
    const { url } = await serve(handler)
    const send = (body: string) =>
      deliver(url, body, { secret: 'secret-of-wh_tenant', webhookId: 'wh_tenant' })
    const dead = JSON.stringify(envelope())
    expect((await send(dead)).status).toBe(500)
    const [entry] = (await ledger.list()).entries
    expect(entry!.id).toMatch(/^[0-9a-f]{32}:payload_/)
    broken = false
    const report = await handler.replay(entry!.id)
    expect(report).toMatchObject({ planned: 1, replayed: 1, skipped: 0 })
    expect(seen).toEqual(['event.created', 'event.created'])
    const payload = { id: 'event_lookup_order', state: 'canceled' }
    const at = (s: number) => `${TODAY}T10:00:0${s}Z`
    const canceled = envelope('event.canceled', { occurred_at: at(2), payload })
    const created = envelope('event.created', { occurred_at: at(1), payload })
    expect((await send(JSON.stringify(canceled))).status).toBe(200)
    expect((await send(JSON.stringify(created))).status).toBe(200)
    expect(seen).toEqual(['event.created', 'event.created', 'event.canceled'])
    const mark = await store.mark(`${entry!.id.slice(0, 32)}:event_lookup_order`)
    expect(mark).toMatchObject({ rank: 5 })
  })

  it('a bulk replay runs the failed and dead entries a filter matches, a page at a time, within max; dryRun only counts', async () => {
    const ledger = createDeliveryLedger({
      store: new MemoryLedgerStore(),
      maxAttempts: 1,
      logger: quiet,
    })
    let broken = true
    let runs = 0
    const handler = createWebhookHandler({
      secret: SECRET,
      ledger,
      logger: quiet,
      on: {
        'event.created': () => {
          runs++
          if (broken) throw new Error('no')
        },
      },
    })
    const { url } = await serve(handler)
    for (let i = 0; i < 25; i++) await deliver(url, JSON.stringify(envelope()))
    await deliver(url, JSON.stringify(envelope('event.changed')))
    expect(runs).toBe(25)
    broken = false
    expect(await handler.replay({ type: 'event.created' }, { dryRun: true })).toMatchObject({
      planned: 25,
      replayed: 0,
    })
    expect(runs).toBe(25)
    const progress: number[] = []
    const some = await handler.replay(
      { type: 'event.created', limit: 4 },
      { max: 10, perSecond: 10_000, onProgress: (r) => progress.push(r.replayed) },
    )
    expect(some).toMatchObject({ planned: 10, replayed: 10 })
    expect(progress).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    const rest = await handler.replay({}, { perSecond: 10_000 })
    expect(rest).toMatchObject({ planned: 15, replayed: 15, failed: 0 })
    expect(runs).toBe(50)
    expect((await ledger.list({ status: 'done', limit: 1000 })).entries).toHaveLength(26)
  })

  it('a delivery older than the last applied to its resource is stale and not run; with stale: run it runs with context.stale', async () => {
    for (const stale of ['skip', 'run'] as const) {
      const ledger = createDeliveryLedger({ store: new MemoryLedgerStore(), stale })
      const applied: { type: string; stale?: true }[] = []
      const handler = createWebhookHandler({
        secret: SECRET,
        ledger,
        onAny: (event, context) =>
          void applied.push({
            type: event.type,
            ...(context.stale ? { stale: true as const } : {}),
          }),
      })
      const { url } = await serve(handler)
      const payload = { id: `event_${stale}`, state: 'canceled' }
      const canceled = envelope('event.canceled', { occurred_at: `${TODAY}T10:00:05Z`, payload })
      const created = envelope('event.created', {
        occurred_at: `${TODAY}T10:00:00Z`,
        payload: { ...payload, state: 'confirmed' },
      })
      expect((await deliver(url, JSON.stringify(canceled))).status).toBe(200)
      const late = await deliver(url, JSON.stringify(created))
      expect(late.status).toBe(200)
      if (stale === 'skip') {
        expect((late.json as { stale?: boolean }).stale).toBe(true)
        expect(applied).toEqual([{ type: 'event.canceled' }])
        expect((await ledger.get(created.id))?.status).toBe('stale')
      } else {
        expect(applied).toEqual([
          { type: 'event.canceled' },
          { type: 'event.created', stale: true },
        ])
      }
      // A creation at the same instant as the cancellation is stale too: it cannot undo it.
      const tie = envelope('event.created', { occurred_at: `${TODAY}T10:00:05Z`, payload })
      await deliver(url, JSON.stringify(tie))
      if (stale === 'skip') expect((await ledger.get(tie.id))?.status).toBe('stale')
    }
  })

  it('bodies are sealed with the cipher (bound to their entry), opened for replay, and a tampered one is refused', async () => {
    const cipher = createCredentialCipher({ keys: { k1: generateCredentialKey() }, current: 'k1' })
    const inner = new MemoryLedgerStore()
    // The store as an attacker with the database sees it: a body may be moved between rows.
    const moved = new Map<string, string>()
    const store: LedgerStore = {
      get: async (id) => {
        const entry = await inner.get(id)
        return entry === undefined || !moved.has(id) ? entry : { ...entry, body: moved.get(id)! }
      },
      write: (e, v) => inner.write(e, v),
      list: (f) => inner.list(f),
      mark: (r) => inner.mark(r),
      setMark: (m, v) => inner.setMark(m, v),
      purge: (p) => inner.purge(p),
    }
    const ledger = createDeliveryLedger({ store, cipher, logger: quiet })
    const seen: string[] = []
    const handler = createWebhookHandler({
      secret: SECRET,
      ledger,
      onAny: (e) => void seen.push(e.id),
    })
    const { url } = await serve(handler)
    const a = envelope()
    const b = envelope()
    await deliver(url, JSON.stringify(a))
    await deliver(url, JSON.stringify(b))
    const entryA = (await ledger.get(a.id))!
    expect(entryA.body!.startsWith('skc1.k1.')).toBe(true)
    expect(entryA.body).not.toContain(a.id)
    expect(await handler.replay(a.id, { again: true })).toMatchObject({ replayed: 1 })
    expect(seen).toEqual([a.id, b.id, a.id])
    // B's sealed body moved onto A's entry does not open.
    const entryB = (await ledger.get(b.id))!
    moved.set(a.id, entryB.body!)
    const report = await handler.replay(a.id, { again: true })
    expect(report.skipped).toBe(1)
    expect(report.problems[0]!.why).toMatch(/credential_mismatch|credential_tampered/)
    expect(seen).toHaveLength(3)
  })

  it("a replay runs as the account its entry's key (which the sealed body is bound to) names: an entry whose unsealed account, id or body was changed in the store runs as no other account", async () => {
    const cipher = createCredentialCipher({ keys: { k1: generateCredentialKey() }, current: 'k1' })
    const store = new MemoryLedgerStore()
    const ledger = createDeliveryLedger({ store, cipher, logger: quiet })
    const ran: (string | undefined)[] = []
    const handler = createWebhookHandler({
      secret: SECRET,
      ledger,
      logger: quiet,
      onAny: (_e, context) => void ran.push(context.account),
    })
    const now = Date.now()
    const record = async (account: string) => {
      const event = envelope('event.created')
      const id = accountKey(account, event.id)
      await store.write(
        {
          id,
          payloadId: event.id,
          type: event.type,
          account,
          status: 'failed',
          attempts: 1,
          source: 'webhook',
          receivedAt: now,
          updatedAt: now,
          body: await sealBody(cipher, id, JSON.stringify(event)),
          bodyExpiresAt: now + 60_000,
        },
        undefined,
      )
      return { id, event }
    }
    const p = await record('acct_P')
    const q = await record('acct_Q')
    // Untouched: it runs as its own account.
    expect(await handler.replay(p.id)).toMatchObject({ replayed: 1 })
    expect(ran).toEqual(['acct_P'])
    // The unsealed account rewritten to another's: refused, nothing runs.
    const entry = (await store.get(q.id))!
    await store.write({ ...entry, account: 'acct_P' }, entry.version)
    const moved = await handler.replay(q.id)
    expect(moved).toMatchObject({ replayed: 0, skipped: 1 })
    expect(moved.problems[0]!.why).toMatch(/account does not match/)
    // Another account's whole entry copied under P's key: its body does not open there.
    const other = await record('acct_Q')
    const copied = (await store.get(other.id))!
    const stolenId = accountKey('acct_P', other.event.id)
    await store.write(
      { ...copied, id: stolenId, account: 'acct_P', version: undefined } as never,
      undefined,
    )
    expect((await handler.replay(stolenId)).replayed).toBe(0)
    // No cipher: a body whose payload id is not its entry's is refused too.
    const a = envelope('event.created')
    const b = envelope('event.created')
    const id = accountKey('acct_P', a.id)
    const plainStore = new MemoryLedgerStore()
    const plainLedger = createDeliveryLedger({ store: plainStore, logger: quiet })
    const plainHandler = createWebhookHandler({
      secret: SECRET,
      ledger: plainLedger,
      logger: quiet,
      onAny: () => {},
    })
    await plainStore.write(
      {
        id,
        payloadId: a.id,
        type: a.type,
        account: 'acct_P',
        status: 'failed',
        attempts: 1,
        source: 'webhook',
        receivedAt: now,
        updatedAt: now,
        body: JSON.stringify(b),
        bodyExpiresAt: now + 60_000,
      },
      undefined,
    )
    const swapped = await plainHandler.replay(id)
    expect(swapped.replayed).toBe(0)
    expect(swapped.problems[0]!.why).toMatch(/payload id is not the one/)
    expect(ran).toEqual(['acct_P'])
  })

  it('a body past its retention is dropped by purge(); the entry stays and a replay says why it cannot run', async () => {
    let now = Date.now()
    const ledger = createDeliveryLedger({
      store: new MemoryLedgerStore(),
      retention: { bodyMs: 1_000, entryMs: 10_000 },
      now: () => now,
    })
    const handler = createWebhookHandler({ secret: SECRET, ledger, onAny: () => {} })
    const { url } = await serve(handler)
    // A delivery of now: within the 10 s the ledger keeps entries (the handler's maxAgeMs).
    const event = envelope('event.created', { occurred_at: new Date(now).toISOString() })
    await deliver(url, JSON.stringify(event))
    now += 1_001
    expect(await handler.replay(event.id)).toMatchObject({
      replayed: 0,
      skipped: 1,
      problems: [{ id: event.id, why: expect.stringMatching(/retention/) }],
    })
    expect(await ledger.purge()).toEqual({ bodies: 1, entries: 0, marks: 0 })
    expect((await ledger.get(event.id))?.body).toBeUndefined()
    expect((await ledger.get(event.id))?.status).toBe('done')
    now += 10_000
    expect(await ledger.purge()).toEqual({ bodies: 0, entries: 1, marks: 1 })
    expect(await ledger.get(event.id)).toBeUndefined()
  })

  it("purge({ account }) drops every body of one account at once and no other's", async () => {
    const store = new MemoryLedgerStore()
    const ledger = createDeliveryLedger({ store })
    const base = { type: 'event.created', source: 'webhook' as const }
    for (const [id, account] of [
      ['a1', 'alice'],
      ['a2', 'alice'],
      ['b1', 'bob'],
    ] as const) {
      await store.write(
        {
          ...base,
          id,
          payloadId: `payload_${id}`,
          account,
          status: 'done',
          attempts: 1,
          receivedAt: Date.now(),
          updatedAt: Date.now(),
          body: '{}',
          bodyExpiresAt: Date.now() + 60_000,
        },
        undefined,
      )
    }
    expect(await ledger.purge({ account: 'alice' })).toEqual({ bodies: 2, entries: 0, marks: 0 })
    expect((await ledger.get('b1'))?.body).toBe('{}')
    expect((await ledger.get('a1'))?.body).toBeUndefined()
  })

  it("a queue's job that never ran (its entry still received) is found by a replay of received entries, and run once", async () => {
    let now = Date.now()
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore(), now: () => now })
    const runs: string[] = []
    const handler = createWebhookHandler({
      secret: SECRET,
      ledger,
      onAny: (e) => void runs.push(e.id),
    })
    const lost = envelope()
    const fresh = envelope()
    const text = (e: { id: string }) => JSON.stringify(e)
    const put = () => {}
    expect(await ledger.handOff({ envelope: lost, key: lost.id, text: text(lost) }, put)).toBe(
      'ran',
    )
    now += 3_600_000
    expect(await ledger.handOff({ envelope: fresh, key: fresh.id, text: text(fresh) }, put)).toBe(
      'ran',
    )
    // Older than an hour in the queue: its job is taken as lost.
    const report = await handler.replay(
      { status: 'received', until: now - 600_000 },
      { reason: 'queued over an hour ago', perSecond: 1_000 },
    )
    expect(report).toMatchObject({ planned: 1, replayed: 1 })
    expect(runs).toEqual([lost.id])
    expect((await ledger.get(lost.id))?.status).toBe('done')
    expect((await ledger.get(fresh.id))?.status).toBe('received')
    // The job, should it turn up after all, finds its entry done: it does not run again.
    expect(
      await ledger.deliver({ envelope: lost, key: lost.id, text: text(lost) }, () =>
        runs.push('twice'),
      ),
    ).toBe('done')
    expect(runs).toEqual([lost.id])
  })

  it('a flood of one account past maxBodiesPerAccount: every delivery runs and is recorded, past the bound without its body; a replay says why; another account keeps its bodies', async () => {
    const ledger = createDeliveryLedger({
      store: new MemoryLedgerStore({ maxBodiesPerAccount: 2 }),
    })
    const runs: string[] = []
    const send = (n: number, account: string) => {
      const event = envelope('event.created', { id: `payload_flood_${account}_${n}` })
      return ledger.deliver(
        { envelope: event, key: event.id, account, text: JSON.stringify(event) },
        () => void runs.push(event.id),
      )
    }
    for (let n = 0; n < 5; n++) expect(await send(n, 'alice')).toBe('ran')
    expect(await send(0, 'bob')).toBe('ran')
    expect(runs).toHaveLength(6)
    const alice = (await ledger.list({ account: 'alice' })).entries
    expect(alice.map((e) => e.status)).toEqual(Array(5).fill('done'))
    expect(alice.filter((e) => e.body !== undefined)).toHaveLength(2)
    expect(alice.filter((e) => e.bodyCapped)).toHaveLength(3)
    expect((await ledger.get('payload_flood_bob_0'))?.body).toBeDefined()
    const handler = createWebhookHandler({ secret: SECRET, ledger, onAny: () => {} })
    const report = await handler.replay('payload_flood_alice_4')
    expect(report.skipped).toBe(1)
    expect(report.problems[0]!.why).toMatch(/not kept: its account kept maxBodiesPerAccount/)
  })

  it('a delivery whose holder died (its lease lapsed) runs again on the next arrival; one within its lease is answered 409', async () => {
    let now = Date.now()
    const store = new MemoryLedgerStore()
    const ledger = createDeliveryLedger({ store, leaseMs: 30_000, now: () => now })
    let runs = 0
    const handler = createWebhookHandler({ secret: SECRET, ledger, onAny: () => void runs++ })
    const { url } = await serve(handler)
    const event = envelope()
    await store.write(
      {
        id: event.id,
        payloadId: event.id,
        type: event.type,
        source: 'webhook',
        status: 'processing',
        attempts: 1,
        receivedAt: now,
        updatedAt: now,
        owner: 'dead-process',
        leaseUntil: now + 30_000,
      },
      undefined,
    )
    expect((await deliver(url, JSON.stringify(event))).status).toBe(409)
    now += 30_000
    expect((await deliver(url, JSON.stringify(event))).status).toBe(200)
    expect(runs).toBe(1)
    expect(await ledger.get(event.id)).toMatchObject({ status: 'done', attempts: 2 })
  })

  it('a running delivery keeps its lease past leaseMs (renewed meanwhile): a retry during it is 409, never a second run', async () => {
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore(), leaseMs: 300 })
    let runs = 0
    // The handler runs until the test lets it end: every retry below arrives while it runs,
    // however slow the machine, and past leaseMs from its start.
    let end: () => void = () => {}
    const ended = new Promise<void>((resolve) => {
      end = resolve
    })
    const handler = createWebhookHandler({
      secret: SECRET,
      ledger,
      onAny: async () => {
        runs++
        await ended
      },
    })
    const { url } = await serve(handler)
    const body = JSON.stringify(envelope())
    const first = deliver(url, body)
    const started = Date.now()
    for (const wait of [150, 350, 350]) {
      await new Promise((r) => setTimeout(r, wait))
      expect((await deliver(url, body)).status).toBe(409)
    }
    expect(Date.now() - started).toBeGreaterThan(2 * 300)
    end()
    expect((await first).status).toBe(200)
    expect(runs).toBe(1)
  })

  it("deliveries of one Event run one at a time in a process, in arrival order past the guard; other Events' run beside them", async () => {
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore() })
    const running = new Map<string, number>()
    let overlapSame = 0
    let overlapOther = 0
    const applied: string[] = []
    const handler = createWebhookHandler({
      secret: SECRET,
      ledger,
      onAny: async (event) => {
        const id = (event.payload as { id: string }).id
        if ((running.get(id) ?? 0) > 0) overlapSame++
        if ([...running.entries()].some(([other, n]) => other !== id && n > 0)) overlapOther++
        running.set(id, (running.get(id) ?? 0) + 1)
        await new Promise((r) => setTimeout(r, 60))
        running.set(id, running.get(id)! - 1)
        applied.push(`${id} ${event.type}`)
      },
    })
    const { url } = await serve(handler)
    const at = (s: number) => `${TODAY}T10:00:0${s}Z`
    const a = { id: 'event_turn_a' }
    const b = { id: 'event_turn_b' }
    const answers = await Promise.all([
      deliver(url, JSON.stringify(envelope('event.created', { occurred_at: at(1), payload: a }))),
      deliver(url, JSON.stringify(envelope('event.canceled', { occurred_at: at(2), payload: a }))),
      deliver(url, JSON.stringify(envelope('event.created', { occurred_at: at(1), payload: b }))),
    ])
    expect(answers.map((x) => x.status)).toEqual([200, 200, 200])
    expect(overlapSame).toBe(0)
    expect(overlapOther).toBeGreaterThan(0)
    // Whichever of a's arrived first ran first; a creation arriving after the cancellation was stale.
    expect(applied.filter((x) => x.startsWith('event_turn_a')).at(-1)).toBe(
      'event_turn_a event.canceled',
    )
  })

  it('a retry of a delivery still waiting its turn is answered 409 at once, and never runs beside the one before it', async () => {
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore() })
    const runs: string[] = []
    let running = 0
    let overlap = 0
    // The first delivery's handler holds until the test lets it go: no timing on the clock.
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const handler = createWebhookHandler({
      secret: SECRET,
      ledger,
      onAny: async (event) => {
        if (running > 0) overlap++
        running++
        if (event.type === 'event.created') await gate
        running--
        runs.push(event.type)
      },
    })
    const { url } = await serve(handler)
    const payload = { id: 'event_waiting' }
    const first = envelope('event.created', { occurred_at: `${TODAY}T10:00:01Z`, payload })
    const second = envelope('event.canceled', { occurred_at: `${TODAY}T10:00:02Z`, payload })
    const one = deliver(url, JSON.stringify(first))
    await vi.waitFor(() => expect(running).toBe(1))
    // Two copies of the second: whichever arrives first waits its turn (no answer yet); the
    // other is answered 409 at once.
    const two = deliver(url, JSON.stringify(second))
    const retry = deliver(url, JSON.stringify(second))
    expect((await Promise.race([two, retry])).status).toBe(409)
    release()
    expect([(await two).status, (await retry).status].sort()).toEqual([200, 409])
    expect((await one).status).toBe(200)
    expect(runs).toEqual(['event.created', 'event.canceled'])
    expect(overlap).toBe(0)
  })

  it('with a queue: enqueued first, then recorded received; a retry is recorded once', async () => {
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore() })
    const jobs: string[] = []
    const handler = createWebhookHandler({
      secret: SECRET,
      ledger,
      queue: { enqueue: (_e, _c, d) => void jobs.push(d!.key) },
    })
    const { url } = await serve(handler)
    const event = envelope()
    expect((await deliver(url, JSON.stringify(event))).json).toEqual({ received: true })
    expect((await deliver(url, JSON.stringify(event))).json).toEqual({
      received: true,
      duplicate: true,
    })
    expect(jobs).toEqual([event.id, event.id])
    expect(await ledger.get(event.id)).toMatchObject({ status: 'received', attempts: 0 })
  })

  it('with a queue: a worker that runs the job before enqueue returns leaves the first arrival answered received; an enqueue that failed is put in again by the retry', async () => {
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore() })
    const ran: string[] = []
    const worker = createWebhookHandler({ secret: SECRET, onAny: (e) => void ran.push(e.id) })
    let refuse = 1
    const handler = createWebhookHandler({
      secret: SECRET,
      ledger,
      logger: quiet,
      queue: {
        enqueue: async (event, context, delivery) => {
          if (refuse-- > 0) throw new Error('the queue is down')
          const data = queuedDelivery(event, context, delivery)
          await runQueued({ handler: worker, ledger, claimMs: 1_000 }, data, data.key!, false)
        },
      },
    })
    const { url } = await serve(handler)
    const lost = envelope()
    expect((await deliver(url, JSON.stringify(lost))).status).toBe(503)
    expect(await ledger.get(lost.id)).toMatchObject({ status: 'received' })
    // The service's retry: still received, so put in again (and run, inline).
    expect((await deliver(url, JSON.stringify(lost))).status).toBe(200)
    expect(await ledger.get(lost.id)).toMatchObject({ status: 'done' })
    const quick = envelope()
    expect((await deliver(url, JSON.stringify(quick))).json).toEqual({ received: true })
    expect((await deliver(url, JSON.stringify(quick))).json).toEqual({
      received: true,
      duplicate: true,
    })
    expect(ran).toEqual([lost.id, quick.id])
  })

  it('health() includes the ledger store; replay() without a ledger says what to set', async () => {
    const handler = createWebhookHandler({
      secret: SECRET,
      ledger: createDeliveryLedger({ store: new MemoryLedgerStore() }),
    })
    expect((await handler.health()).checks.map((c) => c.name)).toContain('ledger.memory')
    const plain = createWebhookHandler({ secret: SECRET })
    await expect(plain.replay('payload_x')).rejects.toMatchObject({ code: 'invalid_options' })
  })

  it('bad options are refused at start-up with invalid_options', () => {
    expect(() => createDeliveryLedger({} as never)).toThrow(/store is required/)
    expect(() => createDeliveryLedger({ store: new MemoryLedgerStore(), maxAttempts: 0 })).toThrow(
      /maxAttempts/,
    )
    expect(() =>
      createDeliveryLedger({ store: new MemoryLedgerStore(), stale: 'maybe' as never }),
    ).toThrow(/stale/)
    expect(() => createWebhookHandler({ secret: SECRET, ledger: {} as never })).toThrow(
      /createDeliveryLedger/,
    )
  })
})
