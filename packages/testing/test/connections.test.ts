import { MemorySubscriptionStore, MemoryTokenStore } from '@scheduling-kit/core'
import { describe, it } from 'vitest'
import { runConnectionScenarios } from '../src/index.js'

// One process's memory stores, shared by every instance (they are one process's instances).
const tokenStore = new MemoryTokenStore()
const subscriptionStore = new MemorySubscriptionStore()
runConnectionScenarios({
  describe,
  it,
  name: 'connection scenarios on the memory stores',
  createStores: () => ({ tokenStore, subscriptionStore }),
})
