// @scheduling-kit/h3: the webhooks middleware and the OAuth sub-app for h3 v2.

// What an app on this framework uses besides the middleware (the rest, such as the
// framework-free handler and the signature functions, is at @scheduling-kit/core).
export * from '@scheduling-kit/core/app'
export * from './entries/webhooks.js'
export { type SchedulingOAuthApp, schedulingOAuth } from './oauth.js'
