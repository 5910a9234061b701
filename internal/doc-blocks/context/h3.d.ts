// An h3 app, and the h3 adapter's functions imported.
import type * as adapter from '@scheduling-kit/h3'
import type { H3 } from 'h3'

declare global {
  const app: H3
  const schedulingWebhooks: typeof adapter.schedulingWebhooks
  const schedulingOAuth: typeof adapter.schedulingOAuth
}
