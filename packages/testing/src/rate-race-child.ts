// One instance of `runRateCapRace`: a `RateCap` over the store the module under test creates,
// taking its turns when the parent says go, telling each turn it was given; the first instance
// answers a 429 after its `throttleAfter`th turn.
import { RateCap, type RateCapStore } from '@scheduling-kit/core'
import type { RateRaceChild, RateRaceMessage } from './rate-race.js'

const config: RateRaceChild = JSON.parse(process.argv[2]!)
const send = (message: RateRaceMessage) => process.send!(message)
const imported = (await import(config.storeModule)) as {
  createStore(): RateCapStore | Promise<RateCapStore>
}
const store = await imported.createStore()
const turns: { at: number; perSecond: number }[] = []
// The store as the cap uses it, each turn it gives kept.
const recording: RateCapStore = {
  reserveTurn: async (name, limits, now) => {
    const turn = await store.reserveTurn(name, limits, now)
    turns.push(turn)
    return turn
  },
  throttleRate: (name, limits, now, retryAfterMs) =>
    store.throttleRate(name, limits, now, retryAfterMs),
}
const cap = new RateCap({
  perSecond: config.perSecond,
  // Not raised back within a race: a turn spaced by the lowered rate shows the 429 reached it.
  raiseEveryMs: 3_600_000,
  store: recording,
  name: config.name,
})
process.on('message', async () => {
  for (let i = 1; i <= config.turns; i++) {
    await cap.acquire()
    if (config.throttles && i === config.throttleAfter) await cap.throttled()
  }
  // Told, then gone: the store's connections would keep the process alive.
  process.send!({ turns } satisfies RateRaceMessage, () => process.exit(0))
})
send({ ready: true })
