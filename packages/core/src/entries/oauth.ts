// @scheduling-kit/core/oauth: connecting accounts through OAuth 2: the client and the routes. The root re-exports it whole.
// Every name here is pinned by test/package/exports.test.ts.

export { createOAuthClient, type OAuthClient, type OAuthClientOptions } from '../oauth/client.js'
export { type ReadConnectionOptions, readConnectedKey } from '../oauth/connection.js'
export type { CookieSecrets } from '../oauth/cookies.js'
export type { OAuthRequest, OAuthResponse, OAuthRoutesOptions } from '../oauth/options.js'
export { createOAuthRoutes, type OAuthRoutes } from '../oauth/routes.js'
