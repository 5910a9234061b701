// @scheduling-kit/core/page: the delivery page of a ledger, its entries with their status,
// attempts and last error, a replay button each and a purge, mountable on any framework
// (`page.node`, `page.fetch`). The root re-exports it whole. Every name here is pinned by
// test/package/exports.test.ts.

export type { PageAnswer, PageRequest } from '../page/http.js'
export type {
  DeliveryPage,
  LedgerPageOptions,
  PageLedger,
  PageNodeRequest,
  PageNodeResponse,
} from '../page/options.js'
export { createDeliveryPage } from '../page/page.js'
