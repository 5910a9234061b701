import type { SchedulingClient } from '../api/client.js'
import type { ApiWebhook, CreatedWebhook } from '../api/webhooks.js'
import { SubscriptionBusyError } from '../errors/store.js'
import { withoutTrailingSlashes } from '../http/paths.js'
import { describeError, emit } from '../log.js'
import { RecentMap } from '../recent.js'
import { accountIdOf } from '../tokens/connection.js'
import type { ConnectionApp } from '../tokens/record.js'
import { subscriptionClient } from './api.js'
import { createWebhook } from './create.js'
import { BUSY, withLease } from './lease.js'
import { OwnerCache } from './lookup.js'
import {
  checkOptions,
  type SubscriptionSettings,
  type WebhookSubscriptionsOptions,
} from './options.js'
import {
  copyRecord,
  type StoredSubscription,
  type SubscribedWebhook,
  type SubscriptionRecord,
  type SubscriptionStore,
} from './store.js'

// The executor of the subscriptions' plans: an account's API client, its lease, compare-and-set
// writes of its record, and the calls at the service (list, create, delete) that never leave a
// webhook unknown to the app nor delete one another key holds. `plan.ts` decides what to do.

/** The app an executor's records are made for. */
export const appOf = (x: Pick<SubscriptionExecutor, 'apiUrl' | 'url'>): ConnectionApp => ({
  apiUrl: withoutTrailingSlashes(x.apiUrl),
  webhookUrl: x.url,
})

const EMPTY: SubscriptionRecord = { active: true, webhooks: [], updatedAt: 0 }

/** The work of one `createWebhookSubscriptions` on its accounts. */
export class SubscriptionExecutor {
  readonly settings: SubscriptionSettings
  readonly store: SubscriptionStore
  readonly url: string
  readonly apiUrl: string
  readonly cache: OwnerCache
  readonly #clients = new RecentMap<string, SchedulingClient>(10_000)

  constructor(readonly options: WebhookSubscriptionsOptions) {
    this.settings = checkOptions(options)
    this.store = options.store
    this.url = options.url
    this.apiUrl = options.apiUrl
    this.cache = new OwnerCache(this.settings.cacheMs, this.settings.now, this.settings.cacheSize)
  }

  now(): number {
    return this.settings.now()
  }

  /** The account's API client (made once per key, its token from the manager). */
  api(key: string): SchedulingClient {
    let client = this.#clients.get(key)
    if (client === undefined) {
      client = subscriptionClient(this.options, key)
      this.#clients.set(key, client)
    }
    return client
  }

  /**
   * The service account the key is connected to: read from the store, not from what this
   * process kept, so that the work that follows (its API calls too) acts on the current
   * connection. With `ask`, a connection that names none (tokens the app wrote itself, a token
   * manager without records) is asked of the service (`GET /me`, one request), as a webhook is
   * about to be made: so it is stamped with the account, and a reconnection to another account
   * by hand is told. `undefined` when neither can tell.
   */
  async accountOf(key: string, ask = false): Promise<string | undefined> {
    const { tokens } = this.options
    const stored =
      typeof tokens.getRecord === 'function'
        ? accountIdOf(await tokens.getRecord(key, { revalidate: true }))
        : undefined
    if (stored !== undefined || !ask) return stored
    return this.api(key)
      .me()
      .then(
        (me) => accountIdOf({ account: me }),
        () => undefined,
      )
  }

  /** Runs `work` holding the account's lease, renewed meanwhile; waits for it up to `waitMs`. */
  withLease<T>(key: string, waitMs: number, work: () => Promise<T>): Promise<T | typeof BUSY> {
    return withLease(this.store, key, this.settings.leaseTtlMs, waitMs, work)
  }

  async leased<T>(key: string, what: string, work: () => Promise<T>): Promise<T> {
    const result = await this.withLease(key, this.settings.leaseWaitMs, work)
    if (result === BUSY) throw new SubscriptionBusyError(what, key, this.settings.leaseWaitMs)
    return result
  }

  /** Reads, changes and writes the account's record by compare-and-set, again on a conflict. */
  async update(
    key: string,
    change: (record: SubscriptionRecord) => SubscriptionRecord,
  ): Promise<StoredSubscription> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.store.get(key)
      const base = current ?? EMPTY
      const next = { ...change(copyRecord(base)), updatedAt: this.now() }
      if (await this.store.compareAndSet(key, next, current?.version)) {
        for (const w of [...base.webhooks, ...next.webhooks]) this.cache.forget(w.id)
        return { ...next, version: (current?.version ?? 0) + 1 }
      }
      if (attempt >= 5) throw new SubscriptionBusyError('write the subscription of', key, 0)
    }
  }

  /**
   * The account's webhooks as the service lists them, by id. An item that is no webhook (not
   * an object with a string id: nothing can be matched or deleted by it) is passed over and
   * told, not left to fail the account's check at every step.
   */
  async list(key: string): Promise<Map<string, ApiWebhook>> {
    const remote = new Map<string, ApiWebhook>()
    let unreadable = 0
    for await (const webhook of this.api(key).webhooks.list()) {
      const item = webhook as unknown
      if (
        typeof item !== 'object' ||
        item === null ||
        typeof (item as ApiWebhook).id !== 'string'
      ) {
        unreadable++
        continue
      }
      remote.set(webhook.id, webhook)
    }
    if (unreadable > 0)
      emit(
        this.settings.logger,
        'warn',
        `Subscriptions: the service listed ${unreadable} item(s) for "${key}" that are no webhook (not an object with an id); passed over.`,
      )
    return remote
  }

  /**
   * Of webhooks this key's record does not list, those another key's record holds (two keys
   * connected to one service account each keep their own webhook), by id, with that key.
   */
  async heldElsewhere(key: string, ids: Iterable<string>): Promise<Map<string, string>> {
    const held = new Map<string, string>()
    for (const id of ids) {
      const found = await this.store.findByWebhook(id)
      if (found !== undefined && found.key !== key) held.set(id, found.key)
    }
    return held
  }

  /** Creates a webhook at our url, cleaning up after lost answers first (see `createWebhook`). */
  create(key: string, record: SubscriptionRecord, actions: string[]): Promise<CreatedWebhook> {
    return createWebhook(this, key, record, actions)
  }

  /**
   * Writes a new webhook into the record (clearing the uncertain mark, stamping the account);
   * if the write fails, deletes it at the service.
   */
  async keep(
    key: string,
    created: CreatedWebhook,
    accountId: string | undefined,
    retire: (w: SubscribedWebhook) => boolean,
  ): Promise<StoredSubscription> {
    const entry: SubscribedWebhook = {
      id: created.id,
      secret: created.secret,
      url: this.url,
      createdAt: this.now(),
    }
    if (accountId !== undefined) entry.accountId = accountId
    try {
      return await this.update(key, (record) => {
        const next: SubscriptionRecord = {
          ...record,
          active: true,
          webhooks: [
            ...record.webhooks.map((w) =>
              w.removedAt === undefined && retire(w) ? { ...w, removedAt: this.now() } : w,
            ),
            entry,
          ],
        }
        delete next.uncertain
        if (accountId !== undefined) next.accountId = accountId
        return next
      })
    } catch (error) {
      // Nobody could verify its deliveries: it must not live on at the service.
      await this.api(key)
        .webhooks.delete(created.id)
        .catch((cause: unknown) =>
          emit(
            this.settings.logger,
            'error',
            `Subscriptions: webhook ${created.id} of "${key}" was created but could not be stored, nor deleted; reconcile deletes it. ${describeError(cause)}`,
          ),
        )
      throw error
    }
  }

  /**
   * Marks live webhooks retired (`removedAt`), those `retiring` holds; with `accountId`, records
   * it as the account's service account in the same write.
   */
  retire(
    key: string,
    retiring: ReadonlySet<string>,
    accountId?: string,
  ): Promise<StoredSubscription> {
    const now = this.now()
    return this.update(key, (r) => ({
      ...r,
      ...(accountId === undefined ? {} : { accountId }),
      webhooks: r.webhooks.map((w) =>
        retiring.has(w.id) && w.removedAt === undefined ? { ...w, removedAt: now } : w,
      ),
    }))
  }

  /** Deletes webhooks at the service; marks those the record lists gone. Returns [deleted, failed]. */
  async sweep(key: string, ids: readonly string[]): Promise<[string[], string[]]> {
    const deleted: string[] = []
    const failed: string[] = []
    for (const id of ids) {
      try {
        await this.api(key).webhooks.delete(id)
        deleted.push(id)
      } catch {
        failed.push(id)
      }
    }
    if (deleted.length > 0) {
      const done = new Set(deleted)
      await this.update(key, (record) => ({
        ...record,
        webhooks: record.webhooks.map((w) => (done.has(w.id) ? { ...w, gone: true } : w)),
      }))
    }
    return [deleted, failed]
  }
}
