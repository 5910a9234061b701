import type { SchedulingClient } from '../api/client.js'
import type { ApiWebhook, CreatedWebhook } from '../api/webhooks.js'
import { isSchedulingError } from '../errors.js'
import { sleep } from '../http.js'
import { describeError, emit } from '../log.js'
import { SubscriptionBusyError } from '../store-errors.js'
import { newClaimOwner } from '../webhooks/dedupe.js'
import { subscriptionClient } from './api.js'
import { OwnerCache } from './lookup.js'
import { checkOptions, type WebhookSubscriptionsOptions } from './options.js'
import {
  copyRecord,
  type StoredSubscription,
  type SubscribedWebhook,
  type SubscriptionRecord,
} from './store.js'

// The machinery every operation on an account's webhooks shares: its API client, its lease,
// compare-and-set writes of its record, and creating, keeping and sweeping webhooks at the
// service without ever leaving one unknown to the app.

export const BUSY = Symbol('busy')

/** A failure after which a POST may or may not have landed. */
function mayHaveLanded(error: unknown): boolean {
  return (
    isSchedulingError(error) &&
    (error.code === 'network_error' ||
      error.code === 'timeout' ||
      error.code === 'invalid_response' ||
      (error.code === 'api_error' && error.status >= 500))
  )
}

/** Whether the service reports a webhook working: active (or no state given) at our url. */
export const works = (remote: ApiWebhook | undefined, url: string) =>
  remote !== undefined &&
  (remote.state === undefined || remote.state === 'active') &&
  remote.url === url

export const live = (record: SubscriptionRecord) =>
  record.webhooks.filter((w) => w.removedAt === undefined)

/** The shared machinery of one `createWebhookSubscriptions`. */
export function subscriptionWork(options: WebhookSubscriptionsOptions) {
  const settings = checkOptions(options)
  const { store, url } = options
  const { now: clock } = settings
  const cache = new OwnerCache(settings.cacheMs, clock)
  const clients = new Map<string, SchedulingClient>()

  /** The account's API client (made once per key, its token from the manager). */
  function api(key: string): SchedulingClient {
    let client = clients.get(key)
    if (client === undefined) {
      if (clients.size >= 10_000) clients.clear()
      client = subscriptionClient(options, key)
      clients.set(key, client)
    }
    return client
  }

  /** Runs `work` holding the account's lease, renewed meanwhile; waits for it up to `waitMs`. */
  async function withLease<T>(
    key: string,
    waitMs: number,
    work: () => Promise<T>,
  ): Promise<T | typeof BUSY> {
    const owner = newClaimOwner()
    const until = performance.now() + waitMs
    for (let pause = 25; !(await store.acquireLease(key, owner, settings.leaseTtlMs)); ) {
      if (performance.now() + pause > until) return BUSY
      await sleep(pause + Math.floor(Math.random() * pause))
      pause = Math.min(pause * 2, 1_000)
    }
    const timer = setInterval(
      () => {
        store.acquireLease(key, owner, settings.leaseTtlMs).catch(() => {})
      },
      Math.floor(settings.leaseTtlMs / 3),
    )
    ;(timer as { unref?: () => void }).unref?.()
    try {
      return await work()
    } finally {
      clearInterval(timer)
      await store.releaseLease(key, owner).catch(() => {})
    }
  }

  async function leased<T>(key: string, what: string, work: () => Promise<T>): Promise<T> {
    const result = await withLease(key, settings.leaseWaitMs, work)
    if (result === BUSY) throw new SubscriptionBusyError(what, key, settings.leaseWaitMs)
    return result
  }

  /** Reads, changes and writes the account's record by compare-and-set, again on a conflict. */
  async function update(
    key: string,
    change: (record: SubscriptionRecord) => SubscriptionRecord,
  ): Promise<StoredSubscription> {
    for (let attempt = 1; ; attempt++) {
      const current = await store.get(key)
      const base: SubscriptionRecord = current ?? { active: true, webhooks: [], updatedAt: 0 }
      const next = { ...change(copyRecord(base)), updatedAt: clock() }
      if (await store.compareAndSet(key, next, current?.version)) {
        for (const w of [...base.webhooks, ...next.webhooks]) cache.forget(w.id)
        return { ...next, version: (current?.version ?? 0) + 1 }
      }
      if (attempt >= 5) throw new SubscriptionBusyError('write the subscription of', key, 0)
    }
  }

  /**
   * Creates a webhook at `url`. A create that failed in a way that may have landed is never
   * repeated blindly: the account's webhooks are listed first, one at our url that this app does
   * not know is adopted when the service shows its secret, else deleted, and only then is the
   * create sent once more.
   */
  async function create(key: string, known: ReadonlySet<string>, actions: string[]) {
    try {
      return await api(key).webhooks.create({ url })
    } catch (error) {
      if (!mayHaveLanded(error)) throw error
      let adopted: CreatedWebhook | undefined
      for await (const remote of api(key).webhooks.list()) {
        if (remote.url !== url || known.has(remote.id) || !works(remote, url)) continue
        if (adopted === undefined && typeof remote.secret === 'string') {
          adopted = remote as CreatedWebhook
          actions.push(`adopted ${remote.id} (its create's answer was lost)`)
        } else {
          await api(key).webhooks.delete(remote.id)
          actions.push(`deleted ${remote.id} (a create whose answer was lost)`)
        }
      }
      return adopted ?? (await api(key).webhooks.create({ url }))
    }
  }

  /** Writes a new webhook into the record; if the write fails, deletes it at the service. */
  async function keep(
    key: string,
    created: CreatedWebhook,
    retire: (w: SubscribedWebhook) => boolean,
  ) {
    const entry: SubscribedWebhook = {
      id: created.id,
      secret: created.secret,
      url,
      createdAt: clock(),
    }
    try {
      return await update(key, (record) => ({
        ...record,
        active: true,
        webhooks: [
          ...record.webhooks.map((w) =>
            w.removedAt === undefined && retire(w) ? { ...w, removedAt: clock() } : w,
          ),
          entry,
        ],
      }))
    } catch (error) {
      // Nobody could verify its deliveries: it must not live on at the service.
      await api(key)
        .webhooks.delete(created.id)
        .catch((cause: unknown) =>
          emit(
            settings.logger,
            'error',
            `Subscriptions: webhook ${created.id} of "${key}" was created but could not be stored, nor deleted; reconcile deletes it. ${describeError(cause)}`,
          ),
        )
      throw error
    }
  }

  /** Deletes retired webhooks still at the service; marks them gone. Returns [deleted, failed]. */
  async function sweep(key: string, ids: readonly string[]): Promise<[string[], string[]]> {
    const deleted: string[] = []
    const failed: string[] = []
    for (const id of ids) {
      try {
        await api(key).webhooks.delete(id)
        deleted.push(id)
      } catch {
        failed.push(id)
      }
    }
    if (deleted.length > 0) {
      const done = new Set(deleted)
      await update(key, (record) => ({
        ...record,
        webhooks: record.webhooks.map((w) => (done.has(w.id) ? { ...w, gone: true } : w)),
      }))
    }
    return [deleted, failed]
  }

  /** Drops retired webhooks that are gone and past their grace period. */
  const expired = (w: SubscribedWebhook, now: number) =>
    w.removedAt !== undefined && w.gone === true && now - w.removedAt > settings.graceMs

  return {
    settings,
    store,
    url,
    clock,
    cache,
    api,
    withLease,
    leased,
    update,
    create,
    keep,
    sweep,
    expired,
  }
}

export type SubscriptionWork = ReturnType<typeof subscriptionWork>
