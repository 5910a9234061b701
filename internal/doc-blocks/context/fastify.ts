// A Fastify app, and the Fastify adapter's plugins imported.
import type * as adapter from '@scheduling-kit/fastify'
import type { FastifyInstance } from 'fastify'

export declare const app: FastifyInstance
export declare const schedulingWebhooks: typeof adapter.schedulingWebhooks
export declare const schedulingOAuth: typeof adapter.schedulingOAuth
