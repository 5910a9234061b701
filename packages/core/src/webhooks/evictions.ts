import type { MemoryDedupeStore } from '../claims/dedupe.js'
import { WebhookError } from '../errors/errors.js'

const EVICTION_REPORT_INTERVAL_MS = 60_000

/**
 * Reports, through `report`, an in-memory dedupe store forgetting payload ids before their
 * time (a late retry of one would run its handlers twice): at most once a minute, with a count.
 */
export function watchEvictions(
  store: MemoryDedupeStore,
  report: (error: WebhookError) => void,
): void {
  let lastReport = Number.NEGATIVE_INFINITY
  let evicted = 0
  store.onEarlyEviction((eviction) => {
    evicted += eviction.count
    const now = Date.now()
    if (now - lastReport < EVICTION_REPORT_INTERVAL_MS) return
    lastReport = now
    const count = evicted
    evicted = 0
    report(
      new WebhookError(
        'dedupe_evicted',
        `The in-memory dedupe store is full: ${count} payload id(s) were forgotten before their ` +
          `time (it holds ${eviction.maxEntries}), so a late retry of one would run its handlers ` +
          'again. Use a shared dedupe store (RedisDedupeStore, PostgresDedupeStore) or raise maxEntries.',
      ),
    )
  })
}
