// A Fastify app, and the Fastify adapter's plugins imported.
import type * as adapter from '@scheduling-kit/fastify'
import type { FastifyInstance } from 'fastify'

declare global {
  const app: FastifyInstance
  const schedulingWebhooks: typeof adapter.schedulingWebhooks
  const schedulingOAuth: typeof adapter.schedulingOAuth
}
