// The providers of the default (Web Crypto) build. The `node` build replaces this module with
// default.node.ts at bundle time (rollup.config.mjs), so the two builds share no state.
export { webAesGcm as defaultAesGcm, webCrypto as defaultProvider } from './web.js'
