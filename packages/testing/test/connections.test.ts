import { MemorySubscriptionStore, MemoryTokenStore } from '@scheduling-kit/core'
import { describe, it } from 'vitest'
import { runConnectionScenarios } from '../src/index.js'

// One process's memory stores, shared by every instance of a scenario (they are one process's
// instances), fresh for each scenario.
let tokenStore = new MemoryTokenStore()
let subscriptionStore = new MemorySubscriptionStore()
runConnectionScenarios({
  describe,
  it: (name, body) =>
    it(name, async () => {
      tokenStore = new MemoryTokenStore()
      subscriptionStore = new MemorySubscriptionStore()
      await body()
    }),
  name: 'connection scenarios on the memory stores',
  createStores: () => ({ tokenStore, subscriptionStore }),
})
