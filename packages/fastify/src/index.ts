// @scheduling-kit/fastify: the webhooks plugin and the OAuth plugin for Fastify.

// What an app on this framework uses besides the plugins (the rest, such as the
// framework-free handler and the signature functions, is at @scheduling-kit/core).
export * from '@scheduling-kit/core/app'
export * from './entries/webhooks.js'
export { type SchedulingOAuthOptions, schedulingOAuth } from './oauth.js'
