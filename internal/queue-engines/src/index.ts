export { bullmqPostgresEngine } from './bullmq-postgres.js'
export { type EngineJob, hexIdOf, jobOf, uuidOf } from './job.js'
export { type Engine, type EngineOptions, pgBossEngine, runJob } from './pg-boss.js'
