import assert from 'node:assert/strict'
import type { FetchLike } from '@scheduling-kit/core'
import type { AppInstance } from './connection-app.js'
import {
  activeAt,
  type ConnectionScenarioOptions,
  STALE_FOR_AT_MOST_MS,
  sleep,
  World,
  within,
} from './connection-world.js'

export type { ConnectionScenarioOptions }

// The connection scenarios: what an app's picture of each connected account must survive, over
// real HTTP (the fake service, the app's routes and webhook endpoint) on the stores given.
// Each instance has its own store objects, as each process has its own clients.

async function reconnected(options: ConnectionScenarioOptions): Promise<void> {
  await within(await World.start(options), async (world) => {
    const [a, b] = [await world.instance(), await world.instance()]
    await world.connect('user-1', 'acct_p')
    assert.equal(await a.me('user-1'), 'acct_p')
    assert.equal(await b.me('user-1'), 'acct_p')
    await world.connect('user-1', 'acct_q')
    // This instance's routes told its manager: at once.
    assert.equal(await a.me('user-1'), 'acct_q')
    // Another instance's kept token is revalidated within revalidateMs.
    await sleep(STALE_FOR_AT_MOST_MS)
    assert.equal(await b.me('user-1'), 'acct_q')
    assert.deepEqual(activeAt(world.service, 'acct_p', world.origin), [])
    assert.equal(activeAt(world.service, 'acct_q', world.origin).length, 1)
    const p = await world.service.trigger('event.created', { account: 'acct_p' })
    assert.deepEqual(p.deliveries, [], 'nothing is delivered for the old account')
    await world.service.trigger('event.created', { account: 'acct_q' })
    assert.deepEqual(
      a.log.handled.map((h) => h.key),
      ['user-1'],
    )
    assert.ok(
      a.log.changes.some(
        (c) => c.type === 'reconnected' && c.key === 'user-1' && c.previousAccountId === 'acct_p',
      ),
    )
    const status = await b.subscriptions.status('user-1')
    assert.equal(status.state, 'connected')
    assert.equal(status.accountId, 'acct_q')
    assert.equal(status.webhook?.state, 'active')
    const report = await b.subscriptions.reconcile()
    assert.deepEqual([report.failed, report.created, report.deleted], [[], 0, 0])
  })
}

async function disconnected(options: ConnectionScenarioOptions): Promise<void> {
  await within(await World.start(options), async (world) => {
    const apps = [await world.instance(), await world.instance(), await world.instance()]
    const cookie = await world.connect('user-2', 'acct_d')
    for (const app of apps) assert.equal(await app.me('user-2'), 'acct_d')
    const answer = await apps[0]!.disconnect(cookie)
    assert.equal(answer.status, 200)
    await assert.rejects(apps[0]!.tokens.getAccessToken('user-2'), { code: 'not_connected' })
    await sleep(STALE_FOR_AT_MOST_MS)
    for (const app of apps) {
      await assert.rejects(app.tokens.getAccessToken('user-2'), { code: 'not_connected' })
      assert.equal((await app.subscriptions.status('user-2')).state, 'disconnected')
    }
    assert.deepEqual(activeAt(world.service, 'acct_d', world.origin), [])
    assert.ok(apps[0]!.log.changes.some((c) => c.type === 'disconnected' && c.key === 'user-2'))
  })
}

async function twoKeysOneAccount(options: ConnectionScenarioOptions): Promise<void> {
  await within(await World.start(options), async (world) => {
    const apps: AppInstance[] = []
    for (let i = 0; i < 4; i++) apps.push(await world.instance())
    await world.connect('team-a', 'acct_t')
    await world.connect('team-b', 'acct_t')
    const hooks = activeAt(world.service, 'acct_t', world.origin)
    assert.equal(hooks.length, 2)
    const reports = await Promise.all(
      apps.map(async (app) => {
        const runs = []
        for (let i = 0; i < 4; i++) runs.push(await app.subscriptions.reconcile())
        return runs
      }),
    )
    for (const report of reports.flat()) {
      assert.deepEqual(report.failed, [])
      assert.equal(report.deleted, 0, JSON.stringify(report.accounts))
      assert.equal(report.created, 0, JSON.stringify(report.accounts))
    }
    assert.deepEqual(
      activeAt(world.service, 'acct_t', world.origin)
        .map((w) => w.id)
        .sort(),
      hooks.map((w) => w.id).sort(),
    )
    await world.service.trigger('event.created', { account: 'acct_t' })
    assert.deepEqual(apps[0]!.log.handled.map((h) => h.key).sort(), ['team-a', 'team-b'])
  })
}

async function disconnectRacingReconnect(options: ConnectionScenarioOptions): Promise<void> {
  await within(await World.start(options), async (world) => {
    let release: () => void = () => {}
    let held = false
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const holding: FetchLike = async (input, init) => {
      if (init?.method === 'DELETE' && !held) {
        held = true
        await gate
      }
      return fetch(input, init)
    }
    const app = await world.instance({ fetch: holding })
    const first = await world.connect('user-3', 'acct_r')
    const disconnecting = app.disconnect(first)
    while (!held) await sleep(5)
    // Browser 2 connects the key again while the disconnect waits on the service.
    const connecting = world.connect('user-3', 'acct_r')
    await sleep(100)
    release()
    const [answer, second] = await Promise.all([disconnecting, connecting])
    assert.equal(answer.status, 200)
    assert.equal(await app.tokens.getAccessToken('user-3').then(() => 'ok'), 'ok')
    assert.equal(await app.me('user-3'), 'acct_r')
    // Browser 2's connection is the stored one: its cookie counts, browser 1's does not.
    assert.equal(await app.connectedKey(second), 'user-3')
    assert.equal(await app.connectedKey(first), undefined)
    const status = await app.subscriptions.status('user-3')
    assert.deepEqual([status.state, status.webhook?.state], ['connected', 'active'])
    assert.deepEqual(
      activeAt(world.service, 'acct_r', world.origin).map((w) => w.id),
      [status.webhook!.id],
    )
    const report = await app.subscriptions.reconcile()
    assert.deepEqual([report.failed, report.created, report.deleted], [[], 0, 0])
  })
}

async function twoAppsSharingStores(options: ConnectionScenarioOptions): Promise<void> {
  const second = await World.start(options)
  await within(await World.start(options), async (world) => {
    try {
      const a = await world.instance()
      const b = await second.instance()
      await world.connect('user-a', 'acct_a')
      await second.connect('user-b', 'acct_b')
      const refreshes = second.service.auth.counters.refresh
      const requests = second.service.api.requests
      const report = await a.subscriptions.reconcile()
      assert.deepEqual(report.otherApp, ['user-b'])
      assert.deepEqual(report.failed, [])
      assert.equal(second.service.api.requests, requests, "no call to the other app's service")
      assert.equal(second.service.auth.counters.refresh, refreshes)
      const theirs = await b.subscriptions.reconcile()
      assert.deepEqual(theirs.otherApp, ['user-a'])
      assert.equal(activeAt(world.service, 'acct_a', world.origin).length, 1)
      assert.equal(activeAt(second.service, 'acct_b', second.origin).length, 1)
    } finally {
      await second.close()
    }
  })
}

async function landedCreates(options: ConnectionScenarioOptions): Promise<void> {
  await within(await World.start(options), async (world) => {
    const app = await world.instance()
    world.service.failApi({ status: 500, count: 2, method: 'POST', landed: true })
    await world.connect('user-4', 'acct_u')
    // Both creates landed; the connection says its webhook is pending.
    assert.equal((await app.subscriptions.status('user-4')).webhook?.state, 'pending')
    const ensured = await app.subscriptions.ensure('user-4')
    const active = activeAt(world.service, 'acct_u', world.origin)
    assert.deepEqual(
      active.map((w) => w.id),
      [ensured.webhookId],
    )
    await world.service.trigger('event.created', { account: 'acct_u' })
    assert.deepEqual(
      app.log.handled.map((h) => h.key),
      ['user-4'],
    )
  })
}

/**
 * Runs the connection scenarios against a pair of stores: reconnecting a key to another
 * service account (same instance and another), a disconnect seen by every instance, two keys
 * of one service account each keeping its webhook through reconciles on four instances, a
 * disconnect racing a reconnection, and two lost create answers in a row.
 */
export function runConnectionScenarios(options: ConnectionScenarioOptions): void {
  const { describe, it } = options
  describe(options.name ?? 'connection scenarios', () => {
    it('reconnected to another service account: every instance answers for the new one, the old webhook is gone', () =>
      reconnected(options))
    it('disconnected: this instance stops at once, every other within revalidateMs, none acts after', () =>
      disconnected(options))
    it('two keys on one service account: each keeps its own webhook through reconciles looping on 4 instances', () =>
      twoKeysOneAccount(options))
    it('a disconnect racing a reconnection (its DELETE held): the newer connection stays, with one working webhook', () =>
      disconnectRacingReconnect(options))
    it("two apps sharing the stores: each one's reconcile leaves the other's records alone, and says so", () =>
      twoAppsSharingStores(options))
    it('two creates in a row that land but answer 500: the next ensure lists first, one webhook is left', () =>
      landedCreates(options))
  })
}
