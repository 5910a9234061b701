// Entry point for Node (the `node` export condition): HMAC through node:crypto.
import { nodeCrypto } from './crypto/node.js'
import { setCryptoProvider } from './crypto/provider.js'

setCryptoProvider(nodeCrypto)

export * from './index.js'
