// A Koa app, and the Koa adapter's functions imported.
import type * as adapter from '@scheduling-kit/koa'
import type Koa from 'koa'

declare global {
  const app: Koa
  const schedulingWebhooks: typeof adapter.schedulingWebhooks
  const schedulingOAuth: typeof adapter.schedulingOAuth
}
