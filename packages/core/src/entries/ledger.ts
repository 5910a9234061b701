// @scheduling-kit/core/ledger: the delivery ledger: every verified delivery recorded with its
// outcome, dead letters, replay. The root re-exports it whole. Stores across processes are in
// @scheduling-kit/redis and @scheduling-kit/postgres; `runLedgerStoreConformance` in
// @scheduling-kit/testing checks one of your own. Every name here is pinned by
// test/package/exports.test.ts.

export type { ReplayRequest } from '../claims/record.js'
export type { CatchUpAccounts, CatchUpOptions, CatchUpReport } from '../ledger/catch-up.js'
export type {
  DeliverySource,
  DeliveryStatus,
  LedgerEntry,
  ResourceMark,
  StoredLedgerEntry,
  StoredResourceMark,
} from '../ledger/entry.js'
export { createDeliveryLedger, DeliveryLedger } from '../ledger/ledger.js'
export { MemoryLedgerStore, type MemoryLedgerStoreOptions } from '../ledger/memory.js'
export type { DeliveryLedgerOptions } from '../ledger/options.js'
export { precedenceOf } from '../ledger/order.js'
export type {
  DeliveryPage,
  LedgerPageOptions,
  PageAnswer,
  PageNodeRequest,
  PageNodeResponse,
  PageRequest,
} from '../ledger/page.js'
export type { RecentAnswer } from '../ledger/recent.js'
export type { LedgerQueue, ReplayOptions, ReplayReport, ReplayRunner } from '../ledger/replay.js'
export type {
  LedgerFilter,
  LedgerPage,
  LedgerPurge,
  LedgerPurged,
  LedgerStore,
} from '../ledger/store.js'
