import { turnedOff } from './registered.js'

// What the observable gauges read when a collection asks, kept by the code that has it whether
// or not telemetry was loaded yet: a meter provider registered later still counts them.

/** Entry counts of the in-memory dedupe stores in use (held weakly). */
export const dedupeStores = /* @__PURE__ */ new Set<WeakRef<{ readonly size: number }>>()

/** When the last `reconcile()` of this process finished (`performance.now()`), if one did. */
export const reconciled: { at: number | undefined } = { at: undefined }

/**
 * Forgets a collected store's entry before the next collection. Made on first use, never at
 * module load: runtimes without it (workerd before its 2025-05-05 compatibility date) load core.
 */
let forgotten: FinalizationRegistry<WeakRef<{ readonly size: number }>> | undefined

/**
 * Counts an in-memory dedupe store in `scheduling.webhook.dedupe.entries` while it lives. Where
 * the runtime has no `WeakRef` the store is not counted (holding it strongly would keep it
 * alive): the gauge then reports nothing, and nothing else changes. Kept before an SDK
 * registered too (a weak reference costs nothing): one started later counts the stores made
 * before it. Not when telemetry is turned off.
 */
export function watchDedupeStore(store: { readonly size: number }): void {
  if (turnedOff() || typeof globalThis.WeakRef !== 'function') return
  const ref = new WeakRef(store)
  dedupeStores.add(ref)
  if (forgotten === undefined && typeof globalThis.FinalizationRegistry === 'function') {
    forgotten = new FinalizationRegistry((dead) => dedupeStores.delete(dead))
  }
  forgotten?.register(store, ref)
}
