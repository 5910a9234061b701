// The exact public surface of @scheduling-kit/fastify, read from the built declarations: its own
// names and the app-facing names of core every adapter re-exports. Change the list deliberately.
import { expectAdapterExports, TYPE_CHECK_TIMEOUT_MS } from '@scheduling-kit/conformance'
import { expectWebhooksEntry } from '@scheduling-kit/conformance/loaded'
import { it } from 'vitest'

const OWN = [
  'schedulingOAuth',
  'SchedulingOAuthOptions',
  'schedulingWebhooks',
  'SchedulingWebhooksOptions',
  'SchedulingWebhooksPlugin',
]

it(
  '@scheduling-kit/fastify exports exactly its own names and the shared re-exports',
  async () => {
    await expectAdapterExports(new URL('../dist/', import.meta.url), OWN)
  },
  TYPE_CHECK_TIMEOUT_MS,
)

it(
  '@scheduling-kit/fastify/webhooks is the middleware alone: of core it loads only the webhook path',
  async () => {
    await expectWebhooksEntry(
      '@scheduling-kit/fastify',
      new URL('../dist/', import.meta.url),
      ['schedulingWebhooks'],
      ['SchedulingWebhooksOptions', 'SchedulingWebhooksPlugin'],
    )
  },
  TYPE_CHECK_TIMEOUT_MS,
)
