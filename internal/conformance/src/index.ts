export {
  ADAPTER_REEXPORTS,
  expectAdapterExports,
  expectExports,
  exportedNames,
} from './exports.js'
export {
  type AdapterHarness,
  type AppSetup,
  captureConsole,
  FAIL_WRITE_HEADER,
  failWritesWhenAsked,
  type ParserPlacement,
} from './harness.js'
export { runConformance } from './suite.js'
