export { createWebhookHandler } from './dist/index.js'
