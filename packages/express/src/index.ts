// @scheduling-kit/express: the webhooks middleware and the OAuth router for Express.

// What an app on this framework uses besides the middleware (the rest, such as the
// framework-free handler and the signature functions, is at @scheduling-kit/core).
export * from '@scheduling-kit/core/app'
export * from './entries/webhooks.js'
export { type SchedulingOAuthMiddleware, schedulingOAuth } from './oauth.js'
