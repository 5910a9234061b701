// @scheduling-kit/core/queue: what a durable queue's package (BullMQ, PostgreSQL) is built from:
// writes grouped across concurrent deliveries (group commit),
// a delivery run once across workers under a claim (or recorded in the ledger), the owner ids claims are held by, what a
// job holds and how a worker runs it, the job's span, health checks and messages that name no secret. Every name here is pinned by
// test/package/exports.test.ts.

export { GroupCommit } from '../batching/group-commit.js'
export { newOwnerId } from '../claims/owner.js'
export type {
  DeliveryOutcome,
  DeliveryRecord,
  LedgerContext,
  LedgerEnvelope,
  RecordRunOptions,
  VerifiedDelivery,
} from '../claims/record.js'
export { type RunOnceOptions, type RunOnceOutcome, runOnce } from '../claims/run-once.js'
export { serverText } from '../errors/errors.js'
export { HealthProblem, runCheck } from '../health/health.js'
export { healthReport } from '../health/report.js'
export { consoleLogger } from '../log.js'
export { encodeStoreKey } from '../stores/keys.js'
export { wholeNumber } from '../validate.js'
export { inJobSpan, type JobSpanOptions } from '../webhooks/telemetry/job-span.js'
export {
  dispatchQueued,
  jobKeyOf,
  type QueuedDelivery,
  queuedDelivery,
  withinMs,
} from '../worker/job.js'
export {
  type WorkerParts,
  type WorkerPartsOptions,
  type WorkerScheduling,
  workerParts,
} from '../worker/parts.js'
export { type QueuedOutcome, type QueuedRunSettings, runQueued } from '../worker/run.js'
