// The default context: an Express app, and the Express adapter's functions imported.
import type * as adapter from '@scheduling-kit/express'
import type { Express } from 'express'

declare global {
  const app: Express
  const express: typeof import('express')
  const schedulingWebhooks: typeof adapter.schedulingWebhooks
  const schedulingOAuth: typeof adapter.schedulingOAuth
  /** The webhook middleware the page set up before. */
  const webhooks: ReturnType<typeof adapter.schedulingWebhooks>
}
