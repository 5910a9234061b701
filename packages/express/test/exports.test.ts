// The exact public surface of @scheduling-kit/express, read from the built declarations: its own
// names and the app-facing names of core every adapter re-exports. Change the list deliberately.
import { expectAdapterExports, TYPE_CHECK_TIMEOUT_MS } from '@scheduling-kit/conformance'
import { expectWebhooksEntry } from '@scheduling-kit/conformance/loaded'
import { it } from 'vitest'

const OWN = [
  'ExpressWebhookOptions',
  'keepRawBody',
  'schedulingOAuth',
  'SchedulingOAuthMiddleware',
  'schedulingWebhooks',
  'SchedulingWebhooksMiddleware',
  'SchedulingWebhooksOptions',
]

it(
  '@scheduling-kit/express exports exactly its own names and the shared re-exports',
  async () => {
    await expectAdapterExports(new URL('../dist/', import.meta.url), OWN)
  },
  TYPE_CHECK_TIMEOUT_MS,
)

it(
  '@scheduling-kit/express/webhooks is the middleware alone: of core it loads only the webhook path',
  async () => {
    await expectWebhooksEntry(
      '@scheduling-kit/express',
      new URL('../dist/', import.meta.url),
      ['keepRawBody', 'schedulingWebhooks'],
      ['ExpressWebhookOptions', 'SchedulingWebhooksMiddleware', 'SchedulingWebhooksOptions'],
    )
  },
  TYPE_CHECK_TIMEOUT_MS,
)
