import {
  createOAuthClient,
  createTokenManager,
  MemorySweepStore,
  MemoryTokenStore,
  type PhaseRange,
  RefreshAhead,
} from '@scheduling-kit/core'
import { inPhases, phaseOf } from '@scheduling-kit/core/store'
import type { VirtualClock } from './clock.js'
import { untilCaughtUp } from './drain.js'
import type { ServiceModel } from './service.js'

// Refresh ahead in the simulation: every account connected in the same minute before the start
// (the worst case: their tokens all expire together), the real token managers and RefreshAhead
// against the service model's token endpoint, stepped every minute on the virtual clock, while
// the app reads the active accounts' tokens on the request path through a manager of its own
// (its token calls are the request path's).

const PERIOD = 100 * 60_000

export interface RefreshRun {
  /**
   * Each minute: refresh ahead's step (`one`), its steps until caught up (`drain`, a cadence's
   * call), or none, then the app's reads of that minute.
   */
  step(reads: readonly string[], steps?: 'one' | 'drain' | 'none'): Promise<void>
  /** Token calls made by the request path, by refresh ahead; refreshes that failed. */
  readonly counts: { requestPath: number; ahead: number; failed: number }
  /** Whether the account's stored refresh token is the service's live one. */
  live(key: string): Promise<boolean>
}

export async function buildRefresh(
  clock: VirtualClock,
  service: ServiceModel,
  keys: readonly string[],
  random: () => number,
): Promise<RefreshRun> {
  const store = new MemoryTokenStore()
  for (const key of keys) {
    const { accessToken, refreshToken } = service.tokens.grant(key)
    // Connected in the minute before the start.
    const obtainedAt = clock.now() - Math.floor(random() * 60_000)
    await store.set(key, {
      accessToken,
      refreshToken,
      tokenType: 'bearer',
      expiresAt: obtainedAt + 7_200_000,
      obtainedAt,
    })
  }
  const counts = { requestPath: 0, ahead: 0, failed: 0 }
  const manager = (counted: 'requestPath' | 'ahead') =>
    createTokenManager({
      store,
      now: clock.now,
      retry: { attempts: 1 },
      oauth: createOAuthClient({
        clientId: 'sim',
        clientSecret: 'sim-secret',
        redirectUri: 'https://app.example.test/callback',
        authUrl: 'https://auth.model.test',
        now: clock.now,
        fetch: (input, init) => {
          counts[counted]++
          return service.fetch(String(input), init)
        },
      }),
    })
  const app = manager('requestPath')
  // The keys by phase, so a step reads only its window's (as an indexing store does).
  const byPhase = keys.map((key) => ({ key, phase: phaseOf(key) }))
  byPhase.sort((a, b) => a.phase - b.phase)
  const inRange = function* (range: PhaseRange) {
    let low = 0
    let high = byPhase.length
    const from = range.from <= range.to ? range.from : 0
    while (low < high) {
      const mid = (low + high) >>> 1
      if (byPhase[mid]!.phase < from) low = mid + 1
      else high = mid
    }
    for (let i = low; i < byPhase.length; i++) {
      const { key, phase } = byPhase[i]!
      if (inPhases(phase, range)) yield key
      else if (range.from <= range.to) return
    }
  }
  const ahead = new RefreshAhead(manager('ahead'), {
    keys: async function* (phases) {
      yield* phases === undefined ? keys : inRange(phases)
    },
    store: new MemorySweepStore({ now: clock.now }),
    everyMs: PERIOD,
    now: clock.now,
    // A million connections are 167 refreshes a second: at 75 ms each, 13 under way at least.
    concurrency: 32,
  })
  return {
    counts,
    live: async (key) => service.tokens.live(key, (await store.get(key))?.refreshToken),
    async step(reads, steps = 'one') {
      if (steps !== 'none')
        for (const report of await untilCaughtUp(steps === 'drain', (first) =>
          ahead.step({ retry: first }),
        ))
          counts.failed += report.failed.length
      await Promise.all(reads.map((key) => app.getAccessToken(key).catch(() => undefined)))
    },
  }
}
