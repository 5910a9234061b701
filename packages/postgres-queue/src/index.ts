export type { QueuePool } from './boss.js'
export { jobIdFor, type PostgresJobData } from './job.js'
export { migrate, type QueueMigrateOptions } from './migrate.js'
export {
  createPostgresQueue,
  type PostgresQueueOptions,
  type PostgresQueueSettings,
  type PostgresWebhookQueue,
} from './queue.js'
export type { JobSettings } from './settings.js'
export { createPostgresWorker, type PostgresWorker, type PostgresWorkerOptions } from './worker.js'
