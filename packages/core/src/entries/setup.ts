// @scheduling-kit/core/setup: one object to configure the whole toolkit (createScheduling), and
// the in-memory store bundle. The root re-exports it whole.
// Every name here is pinned by test/package/exports.test.ts.

export type {
  PeriodicReport,
  PeriodicTaskReport,
  RunDueOptions,
} from '../setup/periodic.js'
export type { PeriodicStepResult } from '../setup/periodic-plan.js'
export {
  createScheduling,
  type Scheduling,
  type SchedulingOptions,
} from '../setup/scheduling.js'
export { memoryStores, type SchedulingStores, type StoreBundle } from '../setup/stores.js'
