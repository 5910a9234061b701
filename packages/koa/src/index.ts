// @scheduling-kit/koa: the webhooks middleware and the OAuth middleware for Koa.

// What an app on this framework uses besides the middleware (the rest, such as the
// framework-free handler and the signature functions, is at @scheduling-kit/core).
export * from '@scheduling-kit/core/app'
export * from './entries/webhooks.js'
export {
  type SchedulingOAuthMiddleware,
  type SchedulingOAuthOptions,
  schedulingOAuth,
} from './oauth.js'
