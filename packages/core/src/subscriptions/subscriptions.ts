import { createSchedulingClient, type SchedulingClient } from '../api/client.js'
import type { ApiRetryOptions } from '../api/retry.js'
import type { ApiWebhook, CreatedWebhook } from '../api/webhooks.js'
import { ConfigError, isSchedulingError } from '../errors.js'
import { type FetchLike, sleep } from '../http.js'
import { checkLogger, consoleLogger, describeError, emit, type Logger } from '../log.js'
import { SubscriptionBusyError } from '../store-errors.js'
import type { TokenManager } from '../tokens/manager.js'
import { newClaimOwner } from '../webhooks/dedupe.js'
import { OwnerCache, type WebhookOwner } from './lookup.js'
import {
  copyRecord,
  type StoredSubscription,
  type SubscribedWebhook,
  type SubscriptionRecord,
  type SubscriptionStore,
} from './store.js'

export interface WebhookSubscriptionsOptions {
  /** Where the service delivers: your webhook endpoint's public address, `https://app.example.com/webhooks/scheduling`. */
  url: string
  /** The token manager of the connected accounts: each account's webhooks are managed with its own token. */
  tokens: Pick<TokenManager, 'getAccessToken'>
  /** The API's address, with `/v1`. */
  apiUrl: string
  /** Where each account's webhooks and secrets are kept. */
  store: SubscriptionStore
  /**
   * How long a webhook this app retired (rotated away, or its account removed) still has its
   * deliveries verified, in ms: deliveries already on their way are then accepted, not refused.
   * Those of a removed account are answered 200 without running handlers. Default 3 days.
   */
  graceMs?: number
  /**
   * How long a webhook's owner and secret are kept in this process after a lookup, in ms, so a
   * delivery costs no store read. Changes made by this process apply at once; another
   * instance's within this time. Default 1 000; 0 reads the store for every delivery.
   */
  cacheMs?: number
  /** An account's lease, taken by each change to its webhooks and renewed while it runs, in ms. Default 30 000. */
  leaseTtlMs?: number
  /** How long `ensure`, `remove` and `rotate` wait for another instance's lease on the account, in ms. Default 60 000. */
  leaseWaitMs?: number
  /** Accounts `reconcile` works on at once. Default 4. */
  concurrency?: number
  /** Retries of the API calls (429, 5xx); see `createSchedulingClient`. */
  retry?: ApiRetryOptions
  /** Time-out of one API request, in ms. Default 10 000. */
  timeoutMs?: number
  fetch?: FetchLike
  /** Where repairs and failures are told. Default `console`. */
  logger?: Logger
  /** Clock, in ms since the epoch, for tests. Default `Date.now`. */
  now?: () => number
}

/** What `ensure` found or did. */
export interface EnsureResult {
  /** The account's webhook now. */
  webhookId: string
  /** Whether a webhook was created (none was working). */
  created: boolean
  /** Webhooks retired on the way (disabled, deleted, or extra ones). */
  retired: string[]
}

/** What `remove` did. */
export interface RemoveResult {
  /** Webhooks deleted at the service (or found gone). */
  deleted: string[]
  /** Webhooks whose deletion failed: `reconcile` tries again while the account's token works. */
  failed: string[]
}

/** What `rotate` did. */
export interface RotateResult {
  /** The new webhook, with its new secret. */
  webhookId: string
  /** The webhooks it replaced; each is deleted at the service unless listed in `failed`. */
  retired: string[]
  /** Retired webhooks whose deletion failed: `reconcile` deletes them later. */
  failed: string[]
}

/** One account in a `reconcile` report. */
export interface ReconcileAccount {
  key: string
  /** `ok` (nothing to do), `repaired`, `removed` (cleaned up after `remove`), or why it could not be checked. */
  outcome:
    | 'ok'
    | 'repaired'
    | 'removed'
    | 'busy'
    | 'reauthorization_required'
    | 'not_connected'
    | 'failed'
  /** What was done, in words: `created wh_2 (wh_1 was disabled)`, `deleted duplicate wh_3`. */
  actions: string[]
  /** The error, for `failed`. */
  error?: unknown
}

/** What `reconcile` found and did. */
export interface ReconcileReport {
  /** Accounts looked at. */
  checked: number
  /** Webhooks created. */
  created: number
  /** Webhooks deleted at the service. */
  deleted: number
  /** Accounts that need their owner to connect again: reported, not retried. */
  reauthorizationRequired: string[]
  /** Accounts with a subscription but no tokens (disconnected without `remove`). */
  notConnected: string[]
  /** Accounts another instance was working on: left to it. */
  busy: string[]
  /** Accounts whose check failed (the API or the store); tried again by the next run. */
  failed: string[]
  /** Every account, in the order finished. */
  accounts: ReconcileAccount[]
  /** Wall time, in ms. */
  ms: number
}

export interface WebhookSubscriptions {
  /** The delivery address the webhooks point at. */
  readonly url: string
  /**
   * Makes sure the account has exactly one working webhook at `url`, creating one when it has
   * none that works. Idempotent, and safe from several instances at once: one remote webhook.
   */
  ensure(key: string): Promise<EnsureResult>
  /** Deletes the account's webhooks at the service (while its token still works) and marks it removed. */
  remove(key: string): Promise<RemoveResult>
  /**
   * A new secret without a gap: creates a second webhook, accepts both while both exist, then
   * deletes the old one. A failure at any step leaves the account a working webhook.
   */
  rotate(key: string): Promise<RotateResult>
  /**
   * Repairs every account's drift (a webhook missing, `disabled`, `deleted`, duplicated at
   * `url`, or left over), reports what it did. Safe on every instance at once: an account
   * another instance is working on is skipped.
   */
  reconcile(): Promise<ReconcileReport>
  /** The account and secret of a webhook id, as the webhook handler uses them; `undefined` when none. */
  lookup(webhookId: string): WebhookOwner | undefined | Promise<WebhookOwner | undefined>
  /** The stored record of an account. */
  get(key: string): Promise<StoredSubscription | undefined>
}

const positive = (value: number | undefined, fallback: number, name: string) => {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ConfigError(
      `createWebhookSubscriptions: ${name} must be a whole number of ms, 0 or more.`,
    )
  }
  return value
}

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
const works = (remote: ApiWebhook | undefined, url: string) =>
  remote !== undefined &&
  (remote.state === undefined || remote.state === 'active') &&
  remote.url === url

const live = (record: SubscriptionRecord) =>
  record.webhooks.filter((w) => w.removedAt === undefined)

function checkOptions(options: WebhookSubscriptionsOptions) {
  const where = 'createWebhookSubscriptions'
  if (typeof options?.url !== 'string' || !URL.canParse(options.url)) {
    throw new ConfigError(
      `${where}: url must be the absolute address the service delivers to, e.g. https://app.example.com/webhooks/scheduling.`,
    )
  }
  if (!/^https?:$/.test(new URL(options.url).protocol)) {
    throw new ConfigError(`${where}: url must be an http: or https: address.`)
  }
  if (typeof options.tokens?.getAccessToken !== 'function') {
    throw new ConfigError(`${where}: tokens must be a token manager (createTokenManager).`)
  }
  if (typeof options.apiUrl !== 'string' || !URL.canParse(options.apiUrl)) {
    throw new ConfigError(
      `${where}: apiUrl must be the API's absolute address with /v1, e.g. https://api.example.com/v1.`,
    )
  }
  const store = options.store as Partial<SubscriptionStore> | undefined
  const methods = [
    'get',
    'compareAndSet',
    'delete',
    'findByWebhook',
    'keys',
    'acquireLease',
    'releaseLease',
  ] as const
  const missing = methods.filter((m) => typeof store?.[m] !== 'function')
  if (missing.length > 0) {
    throw new ConfigError(
      `${where}: store must be a subscription store (MemorySubscriptionStore, RedisSubscriptionStore, PostgresSubscriptionStore); it has no ${missing.join(', ')}.`,
    )
  }
  const concurrency = options.concurrency ?? 4
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new ConfigError(`${where}: concurrency must be a whole number, 1 or more.`)
  }
  return {
    graceMs: positive(options.graceMs, 3 * 24 * 60 * 60_000, 'graceMs'),
    cacheMs: positive(options.cacheMs, 1_000, 'cacheMs'),
    leaseTtlMs: Math.max(1_000, positive(options.leaseTtlMs, 30_000, 'leaseTtlMs')),
    leaseWaitMs: positive(options.leaseWaitMs, 60_000, 'leaseWaitMs'),
    concurrency,
    logger: checkLogger(options.logger, where) ?? consoleLogger,
    now: options.now ?? Date.now,
  }
}

/**
 * Each connected account's own webhook on the service, kept: created on connect (`ensure`),
 * deleted on disconnect (`remove`), rotated without a gap (`rotate`), repaired when it drifts
 * (`reconcile`), and looked up by the webhook handler to verify each delivery with its
 * webhook's secret and name the account it belongs to.
 *
 * @example
 * ```ts
 * const subscriptions = createWebhookSubscriptions({
 *   url: 'https://app.example.com/webhooks/scheduling',
 *   tokens, // createTokenManager({ ... })
 *   apiUrl: 'https://api.example.com/v1',
 *   store: new RedisSubscriptionStore({ client: redis }),
 * })
 * app.use(schedulingWebhooks({ subscriptions, on: { 'event.created': (e, { account }) => ... } }))
 * app.use('/auth/scheduling', schedulingOAuth({ ..., tokenStore, subscriptions }))
 * ```
 */
export function createWebhookSubscriptions(
  options: WebhookSubscriptionsOptions,
): WebhookSubscriptions {
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
      client = createSchedulingClient({
        baseUrl: options.apiUrl,
        token: { manager: options.tokens, key },
        fetch: options.fetch,
        retry: options.retry,
        timeoutMs: options.timeoutMs ?? 10_000,
      })
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

  async function ensure(key: string): Promise<EnsureResult> {
    checkKey(key)
    return await leased(key, 'ensure the webhook of', async () => {
      let record = await store.get(key)
      if (record === undefined || !record.active) {
        // The intent first: if the create fails, reconcile finds the account and repairs it.
        record = await update(key, (r) => ({ ...r, active: true }))
      }
      const retired: string[] = []
      let keptId: string | undefined
      for (const entry of live(record).sort((a, b) => b.createdAt - a.createdAt)) {
        if (
          keptId === undefined &&
          entry.url === url &&
          works(await api(key).webhooks.get(entry.id), url)
        ) {
          keptId = entry.id
        } else retired.push(entry.id)
      }
      let created = false
      if (keptId === undefined) {
        const known = new Set(record.webhooks.map((w) => w.id))
        const made = await create(key, known, [])
        await keep(key, made, () => true)
        keptId = made.id
        created = true
      } else if (retired.length > 0) {
        const retiring = new Set(retired)
        await update(key, (r) => ({
          ...r,
          webhooks: r.webhooks.map((w) =>
            retiring.has(w.id) && w.removedAt === undefined ? { ...w, removedAt: clock() } : w,
          ),
        }))
      }
      if (retired.length > 0) await sweep(key, retired)
      return { webhookId: keptId, created, retired }
    })
  }

  async function remove(key: string): Promise<RemoveResult> {
    checkKey(key)
    return await leased(key, 'remove the webhook of', async () => {
      const now = clock()
      // Marked removed first: from now on its deliveries are answered without handlers.
      const record = await update(key, (r) => ({
        ...r,
        active: false,
        webhooks: r.webhooks.map((w) => (w.removedAt === undefined ? { ...w, removedAt: now } : w)),
      }))
      const ids = record.webhooks.filter((w) => w.gone !== true).map((w) => w.id)
      const [deleted, failed] = await sweep(key, ids)
      return { deleted, failed }
    })
  }

  async function rotate(key: string): Promise<RotateResult> {
    checkKey(key)
    return await leased(key, 'rotate the webhook of', async () => {
      const record = (await store.get(key)) ?? (await update(key, (r) => ({ ...r, active: true })))
      const old = live(record).map((w) => w.id)
      const made = await create(key, new Set(record.webhooks.map((w) => w.id)), [])
      // Both secrets are accepted from here: the new webhook is stored, the old ones retire.
      await keep(key, made, () => false)
      const retiring = new Set(old)
      await update(key, (r) => ({
        ...r,
        webhooks: r.webhooks.map((w) =>
          retiring.has(w.id) && w.removedAt === undefined ? { ...w, removedAt: clock() } : w,
        ),
      }))
      const [, failed] = await sweep(key, old)
      return { webhookId: made.id, retired: old, failed }
    })
  }

  /** One account's repair, holding its lease. */
  async function repair(
    key: string,
    entry: ReconcileAccount,
    counts: { created: number; deleted: number },
  ): Promise<void> {
    const record = await store.get(key)
    if (record === undefined) return
    if (!record.active && record.webhooks.every((w) => w.gone === true)) {
      // Removed, and nothing left at the service: no API call (the tokens are gone by now).
      await forget(key, entry, false)
      return
    }
    const remote = new Map<string, ApiWebhook>()
    try {
      for await (const webhook of api(key).webhooks.list()) remote.set(webhook.id, webhook)
    } catch (error) {
      // A removed account without tokens: what is left at the service cannot be deleted by
      // this app; past the grace period, it is forgotten.
      if (!record.active && isSchedulingError(error) && error.code === 'not_connected')
        await forget(key, entry, true)
      throw error
    }
    const present = (id: string) => remote.has(id) && remote.get(id)!.state !== 'deleted'
    const known = new Set(record.webhooks.map((w) => w.id))
    // The newest live webhook that works is kept; every other live one retires, with its reason.
    const retire = new Map<string, string>()
    let keptId: string | undefined
    for (const w of live(record).sort((a, b) => b.createdAt - a.createdAt)) {
      const there = remote.get(w.id)
      if (record.active && keptId === undefined && w.url === url && works(there, url)) {
        keptId = w.id
        continue
      }
      retire.set(
        w.id,
        !record.active
          ? 'left after remove'
          : there === undefined
            ? 'missing'
            : there.state === 'disabled' || there.state === 'deleted'
              ? there.state
              : there.url !== url || w.url !== url
                ? 'at another url'
                : 'a duplicate',
      )
    }
    if (record.active && keptId === undefined) {
      const made = await create(key, known, entry.actions)
      await keep(key, made, (w) => retire.has(w.id))
      counts.created++
      const was = [...retire].map(([id, why]) => `${id} was ${why}`).join(', ')
      entry.actions.push(`created ${made.id}${was === '' ? '' : ` (${was})`}`)
    } else if (retire.size > 0) {
      const now = clock()
      await update(key, (r) => ({
        ...r,
        webhooks: r.webhooks.map((w) =>
          retire.has(w.id) && w.removedAt === undefined ? { ...w, removedAt: now } : w,
        ),
      }))
      for (const [id, why] of retire) entry.actions.push(`retired ${id} (${why})`)
    }
    // Delete: retired webhooks the service still has, and ones at our url this app does not know.
    const toDelete = record.webhooks
      .filter((w) => (w.removedAt !== undefined || retire.has(w.id)) && w.gone !== true)
      .map((w) => w.id)
      .filter(present)
    for (const [id, webhook] of remote) {
      if (!known.has(id) && webhook.url === url && webhook.state !== 'deleted') {
        toDelete.push(id)
        entry.actions.push(`deleted ${id} (at our url, unknown to this app)`)
      }
    }
    const [deleted, failed] = await sweep(key, toDelete)
    counts.deleted += deleted.length
    for (const id of deleted.filter((id) => known.has(id))) entry.actions.push(`deleted ${id}`)
    // Retired webhooks the service no longer has are gone; gone and past the grace period, forgotten.
    const now = clock()
    const current = await store.get(key)
    if (current !== undefined) {
      const webhooks = current.webhooks
        .map((w) =>
          w.removedAt !== undefined && w.gone !== true && !present(w.id) && !failed.includes(w.id)
            ? { ...w, gone: true }
            : w,
        )
        .filter((w) => !expired(w, now))
      const changed =
        webhooks.length !== current.webhooks.length ||
        webhooks.some((w, i) => w !== current.webhooks[i])
      if (!current.active && webhooks.length === 0) {
        if (await store.delete(key, current.version))
          entry.actions.push('forgot the removed account')
      } else if (changed) {
        await store.compareAndSet(key, { ...current, webhooks, updatedAt: now }, current.version)
      }
    }
    if (entry.actions.length > 0) entry.outcome = record.active ? 'repaired' : 'removed'
    if (failed.length > 0) {
      throw new Error(`the service did not delete ${failed.join(', ')}; the next run tries again`)
    }
  }

  /**
   * Drops a removed account's webhooks past their grace period (the gone ones, or with
   * `evenLeft`, also ones left at the service), and the record once none is left.
   */
  async function forget(key: string, entry: ReconcileAccount, evenLeft: boolean): Promise<void> {
    const current = await store.get(key)
    if (current === undefined || current.active) return
    const now = clock()
    const kept = current.webhooks.filter(
      (w) =>
        !(
          w.removedAt !== undefined &&
          now - w.removedAt > settings.graceMs &&
          (w.gone === true || evenLeft)
        ),
    )
    if (kept.length === 0) {
      if (await store.delete(key, current.version)) {
        entry.actions.push('forgot the removed account')
        entry.outcome = 'removed'
      }
    } else if (kept.length !== current.webhooks.length) {
      await store.compareAndSet(
        key,
        { ...current, webhooks: kept, updatedAt: now },
        current.version,
      )
    }
  }

  async function reconcile(): Promise<ReconcileReport> {
    const started = performance.now()
    const report: ReconcileReport = {
      checked: 0,
      created: 0,
      deleted: 0,
      reauthorizationRequired: [],
      notConnected: [],
      busy: [],
      failed: [],
      accounts: [],
      ms: 0,
    }
    const keys = store.keys()[Symbol.asyncIterator]()
    const worker = async () => {
      for (let next = await keys.next(); !next.done; next = await keys.next()) {
        const key = next.value
        report.checked++
        const entry: ReconcileAccount = { key, outcome: 'ok', actions: [] }
        try {
          const done = await withLease(key, 0, () => repair(key, entry, report))
          if (done === BUSY) {
            entry.outcome = 'busy'
            report.busy.push(key)
          }
        } catch (error) {
          // Checked by code: the error may come from another copy of the package.
          const code = isSchedulingError(error) ? error.code : undefined
          if (code === 'reauthorization_required') {
            entry.outcome = 'reauthorization_required'
            report.reauthorizationRequired.push(key)
          } else if (code === 'not_connected') {
            entry.outcome = 'not_connected'
            report.notConnected.push(key)
          } else {
            entry.outcome = 'failed'
            entry.error = error
            report.failed.push(key)
            emit(
              settings.logger,
              'warn',
              `Subscriptions: reconcile could not check "${key}"; the next run tries again. ${describeError(error)}`,
            )
          }
        }
        for (const action of entry.actions)
          emit(settings.logger, 'info', `Subscriptions: "${key}": ${action}.`)
        report.accounts.push(entry)
      }
    }
    await Promise.all(Array.from({ length: settings.concurrency }, worker))
    report.ms = Math.round(performance.now() - started)
    return report
  }

  function lookup(webhookId: string) {
    return cache.lookup(webhookId, async () => {
      const found = await store.findByWebhook(webhookId)
      if (found === undefined) return undefined
      const webhook = found.record.webhooks.find((w) => w.id === webhookId)
      if (webhook === undefined) return undefined
      const now = clock()
      if (webhook.removedAt !== undefined && now - webhook.removedAt > settings.graceMs)
        return undefined
      return {
        account: found.key,
        secret: webhook.secret,
        handle: found.record.active,
        // Cached no longer than the grace period has left.
        until: webhook.removedAt === undefined ? undefined : webhook.removedAt + settings.graceMs,
      }
    })
  }

  return {
    url,
    ensure,
    remove,
    rotate,
    reconcile,
    lookup,
    get: (key) => store.get(key),
  }
}

const BUSY = Symbol('busy')

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key === '') {
    throw new ConfigError(
      'Subscriptions: the account key must be a non-empty string (the token store key).',
    )
  }
}
