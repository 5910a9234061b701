import { MemoryLedgerStore } from '@scheduling-kit/core'
import { describe, it } from 'vitest'
import { runLedgerScenarios } from '../src/index.js'

runLedgerScenarios(() => new MemoryLedgerStore(), {
  describe,
  it,
  name: 'MemoryLedgerStore: ledger scenarios',
})
