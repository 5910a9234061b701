// @scheduling-kit/core/ledger: the delivery ledger: every verified delivery recorded with its
// outcome, dead letters, replay. The root re-exports it whole; the delivery page is
// @scheduling-kit/core/page. Stores across processes are in
// @scheduling-kit/redis and @scheduling-kit/postgres; `runLedgerStoreConformance` in
// @scheduling-kit/testing checks one of your own. Every name here is pinned by
// test/package/exports.test.ts.

export { createDeliveryLedger } from '../catch-up/ledger.js'
export type { CatchUpAccounts, CatchUpOptions, CatchUpReport } from '../catch-up/options.js'
export type { ReplayRequest } from '../claims/record.js'
export type {
  DeliverySource,
  DeliveryStatus,
  LedgerEntry,
  ResourceMark,
  StoredLedgerEntry,
  StoredResourceMark,
} from '../ledger/entry.js'
export { DeliveryLedger, type LedgerFeed, type RereadReport } from '../ledger/ledger.js'
export { MemoryLedgerStore, type MemoryLedgerStoreOptions } from '../ledger/memory.js'
export type { DeliveryLedgerOptions } from '../ledger/options.js'
export { precedenceOf } from '../ledger/order.js'
export type { RecentAnswer, RecentDropped } from '../ledger/recent.js'
export type { ReplayOptions, ReplayReport } from '../ledger/replay.js'
export type { LedgerQueue, ReplayRunner } from '../ledger/runner.js'
export type {
  LedgerFilter,
  LedgerPage,
  LedgerPurge,
  LedgerPurged,
  LedgerStore,
} from '../ledger/store.js'
