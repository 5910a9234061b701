// The providers of the Web platform (Web Crypto). Under the `node` and `deno` conditions the
// built package takes default.node.ts instead (`#platform`: rollup.config.mjs, package.json
// `imports`); a process loads one of the two, never both.
export { webAesGcm as defaultAesGcm, webCrypto as defaultProvider } from './web.js'
