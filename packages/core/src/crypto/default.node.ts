// The providers of the node platform: node:crypto. See default.ts.
export { nodeAesGcm as defaultAesGcm, nodeCrypto as defaultProvider } from './node.js'
