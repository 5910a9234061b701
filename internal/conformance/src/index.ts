export type { AdapterHarness, AppSetup, ParserPlacement } from './harness.js'
export { runConformance } from './suite.js'
