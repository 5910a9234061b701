// @scheduling-kit/core/tokens: connected accounts' tokens: the manager, the store, the connection's state. The root re-exports it whole.
// Every name here is pinned by test/package/exports.test.ts.

export {
  announceConnectionChange,
  type ConnectionChange,
  type ConnectionStatus,
  newConnection,
  type WebhookStatus,
} from '../tokens/connection.js'
export type { GetTokenOptions, TokenManager } from '../tokens/contract.js'
export type { TokenState, TokenStatus } from '../tokens/machine.js'
export { createTokenManager } from '../tokens/manager.js'
export type { TokenManagerOptions, TokenRefresher } from '../tokens/options.js'
export type { AccountInfo, ConnectionApp, TokenRecord, TokenSet } from '../tokens/record.js'
export {
  RefreshAhead,
  type RefreshAheadOptions,
  type RefreshAheadReport,
} from '../tokens/refresh-ahead.js'
export { MemoryTokenStore, type MemoryTokenStoreOptions, type TokenStore } from '../tokens/store.js'
