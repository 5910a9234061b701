// The exact public surface of @scheduling-kit/koa, read from the built declarations: its own
// names and the app-facing names of core every adapter re-exports. Change the list deliberately.
import { expectAdapterExports, TYPE_CHECK_TIMEOUT_MS } from '@scheduling-kit/conformance'
import { expectWebhooksEntry } from '@scheduling-kit/conformance/loaded'
import { it } from 'vitest'

const OWN = [
  'schedulingOAuth',
  'SchedulingOAuthMiddleware',
  'SchedulingOAuthOptions',
  'schedulingWebhooks',
  'SchedulingWebhooksMiddleware',
]

it(
  '@scheduling-kit/koa exports exactly its own names and the shared re-exports',
  async () => {
    await expectAdapterExports(new URL('../dist/', import.meta.url), OWN)
  },
  TYPE_CHECK_TIMEOUT_MS,
)

it(
  '@scheduling-kit/koa/webhooks is the middleware alone: of core it loads only the webhook path',
  async () => {
    await expectWebhooksEntry(
      '@scheduling-kit/koa',
      new URL('../dist/', import.meta.url),
      ['schedulingWebhooks'],
      ['SchedulingWebhooksMiddleware'],
    )
  },
  TYPE_CHECK_TIMEOUT_MS,
)
