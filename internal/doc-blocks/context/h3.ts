// An h3 app, and the h3 adapter's functions imported.
import type * as adapter from '@scheduling-kit/h3'
import type { H3 } from 'h3'

export declare const app: H3
export declare const schedulingWebhooks: typeof adapter.schedulingWebhooks
export declare const schedulingOAuth: typeof adapter.schedulingOAuth
