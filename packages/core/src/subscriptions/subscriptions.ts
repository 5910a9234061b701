import { ConfigError } from '../errors/errors.js'
import { checkHealth } from '../health/health.js'
import { emit, notify } from '../log.js'
import type { PhaseRange } from '../sweep/schedule.js'
import type { ConnectionStatus, WebhookStatus } from '../tokens/connection.js'
import { appOf, SubscriptionExecutor } from './executor.js'
import type {
  EnsureResult,
  RemoveResult,
  RotateResult,
  WebhookSubscriptions,
  WebhookSubscriptionsOptions,
} from './options.js'
import { ensureCandidates, live, mustList, ofOtherAccount, works } from './plan.js'
import { reconciler } from './reconcile.js'
import { repairAccount } from './repair.js'
import type { StoredSubscription } from './store.js'
import { Sweeper } from './sweep.js'
import { sweepSettings } from './sweep-options.js'

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
  const x = new SubscriptionExecutor(options)
  const reconcile = reconciler(x)
  const sweeper =
    options.sweep === undefined ? undefined : new Sweeper(x, sweepSettings(options.sweep))
  return {
    url: x.url,
    apiUrl: x.apiUrl,
    ensure: (key) => ensure(x, key),
    remove: async (key) => {
      checkKey(key)
      return await x.leased(key, 'remove the webhook of', () => removeLeased(x, key))
    },
    replaceConnection: async (key, change) => {
      checkKey(key)
      return await x.leased(key, 'replace the connection of', async () => {
        const removed = await removeLeased(x, key)
        return { ...removed, result: await change() }
      })
    },
    rotate: (key) => rotate(x, key),
    reconcile,
    sweep: async (stepOptions) => {
      if (sweeper === undefined)
        throw new ConfigError(
          'sweep: give createWebhookSubscriptions a sweep option ({ store: new MemorySweepStore() }, or a shared store).',
        )
      return await sweeper.step(stepOptions)
    },
    lookup: (webhookId) => lookup(x, webhookId),
    status: (key) => status(x, key),
    get: (key) => x.store.get(key),
    client: (key) => {
      checkKey(key)
      return x.api(key)
    },
    keys: (phases) => activeKeys(x, phases),
    health: (healthOptions) => checkHealth({ store: x.store }, healthOptions),
  }
}

async function ensure(x: SubscriptionExecutor, key: string): Promise<EnsureResult> {
  checkKey(key)
  return await x.leased(key, 'ensure the webhook of', async () => {
    let accountId = await x.accountOf(key)
    let record = await x.store.get(key)
    if (record === undefined || !record.active || record.app === undefined) {
      // The intent first: if the create fails, reconcile finds the account and repairs it.
      record = await x.update(key, (r) => ({ ...r, active: true, app: appOf(x) }))
    }
    if (mustList(record, accountId)) return await ensureListed(x, key, record, accountId)
    // The newest candidate the service says works stays; every other live webhook retires.
    let keptId: string | undefined
    for (const entry of ensureCandidates(record, x.url, accountId)) {
      if (works(await x.api(key).webhooks.get(entry.id), x.url)) {
        keptId = entry.id
        break
      }
    }
    if (keptId === undefined && accountId === undefined) {
      // None works and the connection names no account (tokens written by hand): asked of the
      // service, so the webhook made is stamped with it, and one of another account is told.
      accountId = await x.accountOf(key, true)
      if (mustList(record, accountId)) return await ensureListed(x, key, record, accountId)
    }
    const retired = live(record)
      .filter((w) => w.id !== keptId)
      .map((w) => w.id)
    let created = false
    if (keptId === undefined) {
      const made = await x.create(key, record, [])
      await x.keep(key, made, accountId, () => true)
      keptId = made.id
      created = true
    } else if (retired.length > 0 || (accountId !== undefined && record.accountId !== accountId)) {
      await x.retire(key, new Set(retired), accountId)
    }
    if (retired.length > 0) await x.sweep(key, retired)
    return { webhookId: keptId, created, retired }
  })
}

/**
 * `ensure` of an account that must be listed first (a create's answer may have been lost, or
 * the key is connected to another service account than its webhooks): the repair plan.
 */
async function ensureListed(
  x: SubscriptionExecutor,
  key: string,
  record: StoredSubscription,
  accountId: string | undefined,
): Promise<EnsureResult> {
  const actions: string[] = []
  const done = await repairAccount(x, key, record, accountId, actions)
  for (const action of actions)
    emit(x.settings.logger, 'info', `Subscriptions: "${key}": ${action}.`)
  if (actions.length > 0)
    notify(x.options.onConnectionChange, { type: 'webhook_repaired', key, actions })
  return { webhookId: done.keep!, created: done.created > 0, retired: done.retired }
}

/** `remove`'s work, under the account's lease. */
async function removeLeased(x: SubscriptionExecutor, key: string): Promise<RemoveResult> {
  const now = x.now()
  // Marked removed first: from now on its deliveries are answered without handlers.
  const record = await x.update(key, (r) => ({
    ...r,
    active: false,
    webhooks: r.webhooks.map((w) => (w.removedAt === undefined ? { ...w, removedAt: now } : w)),
  }))
  const ids = record.webhooks.filter((w) => w.gone !== true).map((w) => w.id)
  // With the token of the connection stored now (another instance may have kept an older one).
  await x.accountOf(key).catch(() => undefined)
  const [deleted, failed] = await x.sweep(key, ids)
  return { deleted, failed }
}

async function rotate(x: SubscriptionExecutor, key: string): Promise<RotateResult> {
  checkKey(key)
  return await x.leased(key, 'rotate the webhook of', async () => {
    const accountId = await x.accountOf(key, true)
    const record =
      (await x.store.get(key)) ??
      (await x.update(key, (r) => ({ ...r, active: true, app: appOf(x) })))
    const old = live(record).map((w) => w.id)
    const made = await x.create(key, record, [])
    // Both secrets are accepted from here: the new webhook is stored, the old ones retire.
    await x.keep(key, made, accountId, () => false)
    await x.retire(key, new Set(old))
    const [, failed] = await x.sweep(key, old)
    return { webhookId: made.id, retired: old, failed }
  })
}

function lookup(x: SubscriptionExecutor, webhookId: string) {
  return x.cache.lookup(webhookId, async () => {
    const found = await x.store.findByWebhook(webhookId)
    if (found === undefined) return undefined
    const { record } = found
    const webhook = record.webhooks.find((w) => w.id === webhookId)
    if (webhook === undefined) return undefined
    const now = x.now()
    const { graceMs } = x.settings
    if (webhook.removedAt !== undefined && now - webhook.removedAt > graceMs) return undefined
    return {
      account: found.key,
      secret: webhook.secret,
      // A webhook of the account the key was connected to before runs no handlers.
      handle: record.active && !ofOtherAccount(webhook, record.accountId),
      // Cached no longer than the grace period has left.
      until: webhook.removedAt === undefined ? undefined : webhook.removedAt + graceMs,
    }
  })
}

async function status(x: SubscriptionExecutor, key: string): Promise<ConnectionStatus> {
  checkKey(key)
  const { tokens } = x.options
  const [connection, record] = await Promise.all([
    typeof tokens.status === 'function'
      ? tokens.status(key)
      : Promise.resolve<ConnectionStatus>({ key, state: 'connected' }),
    x.store.get(key),
  ])
  return { ...connection, webhook: webhookStatus(record) }
}

function webhookStatus(record: StoredSubscription | undefined): WebhookStatus {
  if (record === undefined) return { state: 'none' }
  if (!record.active) return { state: 'removed' }
  const current = live(record)
    .filter((w) => !ofOtherAccount(w, record.accountId))
    .sort((a, b) => b.createdAt - a.createdAt)[0]
  return current === undefined ? { state: 'pending' } : { state: 'active', id: current.id }
}

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key === '') {
    throw new ConfigError(
      'Subscriptions: the account key must be a non-empty string (the token store key).',
    )
  }
}

/** The keys of the accounts with a live subscription (removed ones left out). */
async function* activeKeys(x: SubscriptionExecutor, phases?: PhaseRange): AsyncIterable<string> {
  for await (const key of x.store.keys(phases))
    if ((await x.store.get(key))?.active === true) yield key
}
