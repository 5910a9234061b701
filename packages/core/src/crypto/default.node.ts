// The provider of the `node` build: node:crypto. See default.ts.
export { nodeCrypto as defaultProvider } from './node.js'
