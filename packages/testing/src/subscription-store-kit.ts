import { randomBytes } from 'node:crypto'
import type {
  StoredSubscription,
  SubscribedWebhook,
  SubscriptionRecord,
} from '@scheduling-kit/core'

// What the subscription store battery's parts share: the records and webhooks they write, keys.

export const key = (name: string) => `conformance:${name}:${randomBytes(4).toString('hex')}`
export const hookId = () => `wh_${randomBytes(6).toString('hex')}`
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export function webhook(overrides: Partial<SubscribedWebhook> = {}): SubscribedWebhook {
  return {
    id: hookId(),
    secret: randomBytes(18).toString('base64url'),
    url: 'https://app.example.test/webhooks/scheduling',
    createdAt: Date.now(),
    ...overrides,
  }
}

export function record(
  webhooks: SubscribedWebhook[] = [webhook()],
  active = true,
): SubscriptionRecord {
  return { active, webhooks, updatedAt: Date.now() }
}

/** The record without the version a store adds. */
export function plain(stored: StoredSubscription | undefined): SubscriptionRecord | undefined {
  if (stored === undefined) return undefined
  const { version: _, ...rest } = stored
  return rest
}
