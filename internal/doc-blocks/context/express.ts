// The default context: an Express app, and the Express adapter's functions imported. A block
// gets each of these names it does not declare itself.
import type * as adapter from '@scheduling-kit/express'
import type { Express } from 'express'

export declare const app: Express
export declare const express: typeof import('express')
export declare const schedulingWebhooks: typeof adapter.schedulingWebhooks
export declare const schedulingOAuth: typeof adapter.schedulingOAuth
/** The webhook middleware the page set up before. */
export declare const webhooks: ReturnType<typeof adapter.schedulingWebhooks>
