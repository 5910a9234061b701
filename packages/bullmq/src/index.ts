export type { ConnectionInput } from './connection.js'
export { jobIdFor, type WebhookJobData } from './job.js'
export {
  type BullMQQueueOptions,
  type BullMQQueueSettings,
  type BullMQWebhookQueue,
  createBullMQQueue,
} from './queue.js'
export {
  type BullMQWorker,
  type BullMQWorkerOptions,
  createBullMQWorker,
  createWebhookWorker,
  type WebhookWorker,
  type WebhookWorkerOptions,
} from './worker.js'
