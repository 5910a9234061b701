// What the load generators share: a free loopback port, and the headers each variant's sender
// signs a payload with.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:net'
import { signPayload } from '@scheduling-kit/core'
import Stripe from 'stripe'
import { SECRET, type Variant } from './servers.js'

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}

/** The headers each variant's sender sends: the service's, GitHub's or Stripe's. */
export async function headersFor(
  variant: Variant,
  payload: string,
): Promise<Record<string, string>> {
  const json = { 'content-type': 'application/json' }
  if (variant === 'octokit') {
    const hex = (await signPayload(payload, SECRET)).toLowerCase()
    return {
      ...json,
      'x-hub-signature-256': hex,
      'x-github-event': 'ping',
      'x-github-delivery': randomUUID(),
    }
  }
  if (variant === 'stripe') {
    const header = new Stripe('sk_test_bench').webhooks.generateTestHeaderString({
      payload,
      secret: SECRET,
    })
    return { ...json, 'stripe-signature': header }
  }
  return {
    ...json,
    'x-service-signature': await signPayload(payload, SECRET),
    'x-service-webhook-id': 'wh_bench',
  }
}

/** How each variant is named in the tables. */
export const LABEL: Record<Variant, string> = {
  baseline: 'hand-written route',
  ours: 'scheduling-kit',
  octokit: '@octokit/webhooks createNodeMiddleware',
  stripe: 'stripe express.raw() + constructEvent',
}
