// @scheduling-kit/core/lazy: the toolkit configured once and loaded at first use
// (lazyScheduling), for a route that starts with only what it imports. The root re-exports it.
// Every name here is pinned by test/package/exports.test.ts.

export { type LazyScheduling, lazyScheduling } from '../setup/lazy.js'
