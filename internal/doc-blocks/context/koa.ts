// A Koa app, and the Koa adapter's functions imported.
import type * as adapter from '@scheduling-kit/koa'
import type Koa from 'koa'

export declare const app: Koa
export declare const schedulingWebhooks: typeof adapter.schedulingWebhooks
export declare const schedulingOAuth: typeof adapter.schedulingOAuth
