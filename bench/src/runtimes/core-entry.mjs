// Core's entry as a module of its own, for ../runtimes.ts to bundle with the platform a set of
// conditions selects (`CORE` is aliased to core's entry).
export * from 'CORE'
