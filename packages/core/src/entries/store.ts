// @scheduling-kit/core/store: what a store package (Redis, PostgreSQL, one of your own) is built
// from: keys written losslessly, records sealed with the app's cipher, health checks, whole
// numbers checked, messages that name no secret. Every name here is pinned by
// test/package/exports.test.ts.

export { accountKey, accountOfKey, identityKey, scopeOfKey } from '../claims/keys.js'
export { cipherOption, RecordSealer } from '../credentials/sealed.js'
export { serverText, textOf } from '../errors/errors.js'
export { HealthProblem, healthDetail, runCheck } from '../health/health.js'
export { healthReport } from '../health/report.js'
export {
  DEFAULT_BODIES_PER_ACCOUNT,
  ledgerPageSize,
  ledgerTimeOf,
  markHorizonOf,
  maxBodiesOption,
  readLedgerCursor,
} from '../ledger/store.js'
export { consoleLogger } from '../log.js'
export { decodeStoreKey, encodeStoreKey } from '../stores/keys.js'
export {
  latestTurn,
  MAX_PAUSE_MS,
  pauseOf,
  type RateTurns,
  reserveTurn,
  saneTurns,
  startTurns,
  throttleTurns,
} from '../sweep/rate.js'
export { failuresRead } from '../sweep/retries.js'
export { inPhases, PHASES, phaseOf } from '../sweep/schedule.js'
export { wholeNumber } from '../validate.js'
