// @scheduling-kit/core/credentials: credentials sealed at rest: the cipher and the store wrappers. The root re-exports it whole.
// Every name here is pinned by test/package/exports.test.ts.

export { createCredentialCipher } from '../credentials/cipher.js'
export { isSealedCredential } from '../credentials/envelope.js'
export { generateCredentialKey } from '../credentials/keys.js'
export type { ReencryptResult } from '../credentials/sealed.js'
export type {
  CredentialCipher,
  CredentialCipherOptions,
  CredentialContext,
  CredentialKey,
  OpenedCredential,
} from '../credentials/types.js'
export { encryptSubscriptionStore } from '../subscriptions/encrypt.js'
export { encryptTokenStore } from '../tokens/encrypt.js'
