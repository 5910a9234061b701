export { bullmqPostgresEngine } from './bullmq-postgres.js'
export { type Engine, type EngineOptions, type EngineWorkerOptions, runJob } from './engine.js'
export { type EngineJob, hexIdOf, jobOf, uuidOf } from './job.js'
export { pgBossEngine } from './pg-boss.js'
