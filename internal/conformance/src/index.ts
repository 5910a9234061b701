export { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
export {
  encodingsOf,
  raceWhileSweeping,
  revealed,
  runSealedStoreAttacks,
  type SealedBackend,
  type SweptRace,
} from './at-rest.js'
export { type ConfiguredOnceKit, runConfiguredOnce, serveScheduling } from './configured-once.js'
export { COOKIE_SECRET, SECRET } from './context.js'
export {
  ADAPTER_REEXPORTS,
  expectAdapterExports,
  expectExports,
  exportedNames,
  TYPE_CHECK_TIMEOUT_MS,
} from './exports.js'
export {
  type AdapterHarness,
  type AppSetup,
  captureConsole,
  FAIL_WRITE_HEADER,
  failWritesWhenAsked,
  type ParserPlacement,
} from './harness.js'
export { type Answer, cookieHeader, deliver, envelope, freePort, request } from './http.js'
export { type OwnPostgres, ownPostgres } from './own-postgres.js'
export { type LocalBouncer, startPgbouncer } from './pgbouncer.js'
export { runConformance } from './suite.js'
