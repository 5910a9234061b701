import { ConfigError } from '../errors.js'
import { checkHealth } from '../health.js'
import type {
  EnsureResult,
  RemoveResult,
  RotateResult,
  WebhookSubscriptions,
  WebhookSubscriptionsOptions,
} from './options.js'
import { reconciler } from './reconcile.js'
import { live, subscriptionWork, works } from './work.js'

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
  const work = subscriptionWork(options)
  const { settings, store, url, clock, cache, api, leased, update, create, keep, sweep } = work
  const reconcile = reconciler(work)

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
    health: (options) => checkHealth({ store }, options),
  }
}

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key === '') {
    throw new ConfigError(
      'Subscriptions: the account key must be a non-empty string (the token store key).',
    )
  }
}
