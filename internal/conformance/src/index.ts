export type { AdapterHarness, AppSetup, ParserPlacement } from './harness.js'
export { runConformance } from './suite.js'
export { ADAPTER_REEXPORTS, exportedNames } from './exports.js'
