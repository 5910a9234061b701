import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { ClaimResult, DedupeStore } from '@scheduling-kit/core'
import { ConfigError } from '@scheduling-kit/core'
import { alikeKeys } from './alike-keys.js'
import type { StoreConformanceOptions } from './conformance-options.js'

type It = StoreConformanceOptions['it']

/** The times the kit asks a store for: pass them to your store's options. */
export interface DedupeTiming {
  /** How long a claim lasts when its owner neither completes nor releases it, in ms. */
  leaseMs: number
  /** How long a completed key is remembered, in ms. */
  ttlMs: number
}

const key = (name: string) => `dedupe-conformance:${name}:${randomBytes(4).toString('hex')}`
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const LONG: DedupeTiming = { leaseMs: 60_000, ttlMs: 600_000 }
/** Short enough to wait out, long enough for a loaded machine's round trips to a server. */
const SHORT: DedupeTiming = { leaseMs: 400, ttlMs: 400 }
/**
 * For renewals: each comes at half the lease, so one may be most of a second late (a busy
 * machine) and still hold.
 */
const RENEWING: DedupeTiming = { leaseMs: 2_000, ttlMs: 2_000 }

/**
 * The battery a `DedupeStore` must pass: claims, owners, expiry, and races of many parallel
 * calls on one key (exactly one `claimed`). Call it from your own test file:
 *
 * `createStore` receives the lease and completion times a test needs; a store that cannot be
 * told them fails the expiry tests.
 *
 * @example
 * ```ts
 * // test/dedupe-store.test.ts
 * import { describe, it } from 'vitest'
 * runDedupeStoreConformance((timing) => new MyDedupeStore(db, timing), { describe, it })
 * ```
 */
export function runDedupeStoreConformance(
  createStore: (timing: DedupeTiming) => DedupeStore | Promise<DedupeStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  if (typeof describe !== 'function' || typeof it !== 'function') {
    throw new ConfigError('runDedupeStoreConformance: pass { describe, it } from your test runner.')
  }
  dedupeClaimsAndOwners(createStore, options)
  dedupeLapses(createStore, options)
  dedupeRaces(createStore, options)
  dedupeAlikeKeys(createStore, options)
}

/** A claim, its holder, and what other owners can and cannot do to it. */
function claimsAndOwners(store: (timing?: DedupeTiming) => Promise<DedupeStore>, it: It): void {
  it('claim, in_progress for anyone else, completed after complete', async () => {
    const s = await store()
    const k = key('basic')
    assert.equal(await s.claim(k, 'a'), 'claimed')
    assert.equal(await s.claim(k, 'b'), 'in_progress')
    assert.equal(await s.claim(k, 'a'), 'in_progress', 'a claim is not re-entrant')
    await s.complete(k, 'a')
    assert.equal(await s.claim(k, 'b'), 'completed')
  })

  it("extend (when the store has it) renews only its holder's claim, past the lease", async () => {
    const s = await store(RENEWING)
    if (typeof s.extend !== 'function') return
    const k = key('extend')
    assert.equal(await s.claim(k, 'a'), 'claimed')
    assert.equal(await s.extend(k, 'b'), false, 'another owner cannot extend it')
    for (let i = 0; i < 4; i++) {
      await sleep(RENEWING.leaseMs / 2)
      assert.equal(await s.extend(k, 'a'), true, 'the holder extends it')
    }
    // Twice the lease has passed since the claim: renewed, it still holds.
    assert.equal(await s.claim(k, 'b'), 'in_progress')
    await s.complete(k, 'a')
    assert.equal(await s.extend(k, 'a'), false, 'a completed key is not a claim')
  })

  it('release by the holder frees the key; release by another owner does not', async () => {
    const s = await store()
    const k = key('release')
    assert.equal(await s.claim(k, 'a'), 'claimed')
    await s.release(k, 'b')
    assert.equal(await s.claim(k, 'b'), 'in_progress', 'only the holder releases')
    await s.release(k, 'a')
    assert.equal(await s.claim(k, 'b'), 'claimed')
  })

  it('complete by another owner leaves the holder in charge', async () => {
    const s = await store()
    const k = key('complete-other')
    assert.equal(await s.claim(k, 'holder'), 'claimed')
    await s.complete(k, 'stranger')
    assert.equal(await s.claim(k, 'c'), 'in_progress')
    await s.release(k, 'holder')
    assert.equal(await s.claim(k, 'c'), 'claimed')
  })

  it('release does not undo a completion, whoever asks', async () => {
    const s = await store()
    const k = key('release-completed')
    await s.claim(k, 'a')
    await s.complete(k, 'a')
    await s.release(k, 'a')
    await s.release(k, 'b')
    assert.equal(await s.claim(k, 'c'), 'completed')
  })

  it('complete without a claim (the claim lapsed unseen) still records the completion', async () => {
    const s = await store()
    const k = key('complete-unclaimed')
    await s.complete(k, 'a')
    assert.equal(await s.claim(k, 'b'), 'completed')
  })
}

/** Keys kept apart, owners of any text. */
function isolatedKeys(store: (timing?: DedupeTiming) => Promise<DedupeStore>, it: It): void {
  it('keys are isolated, even when one is a prefix of another, and owners may hold any text', async () => {
    const s = await store()
    const k = key('iso')
    const owner = `o:{*}%"'\\ ${randomBytes(2).toString('hex')} \u00e9\u{1f600}`
    assert.equal(await s.claim(k, owner), 'claimed')
    assert.equal(await s.claim(`${k}:1`, owner), 'claimed')
    assert.equal(await s.claim(`${k}1`, owner), 'claimed')
    await s.complete(`${k}:1`, owner)
    await s.release(k, owner)
    assert.equal(await s.claim(k, 'x'), 'claimed')
    assert.equal(await s.claim(`${k}:1`, 'x'), 'completed')
    assert.equal(await s.claim(`${k}1`, 'x'), 'in_progress')
  })
}

function dedupeClaimsAndOwners(
  createStore: (timing: DedupeTiming) => DedupeStore | Promise<DedupeStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  const store = async (timing = LONG) => await createStore(timing)

  describe(options.name ?? 'DedupeStore conformance', () => {
    claimsAndOwners(store, it)
    isolatedKeys(store, it)
  })
}

function dedupeLapses(
  createStore: (timing: DedupeTiming) => DedupeStore | Promise<DedupeStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  const store = async (timing = LONG) => await createStore(timing)

  describe(options.name ?? 'DedupeStore conformance', () => {
    it('a claim lapses after its lease; the late holder can then neither free nor finish the new claim', async () => {
      const s = await store(SHORT)
      const k = key('lapse')
      assert.equal(await s.claim(k, 'slow'), 'claimed')
      await sleep(SHORT.leaseMs + 150)
      assert.equal(await s.claim(k, 'retry'), 'claimed', 'a lapsed claim can be taken')
      await s.release(k, 'slow')
      assert.equal(
        await s.claim(k, 'third'),
        'in_progress',
        "the late release freed the retry's claim",
      )
      await s.complete(k, 'slow')
      await s.release(k, 'retry')
      assert.equal(
        await s.claim(k, 'third'),
        'claimed',
        "the late complete finished the retry's claim",
      )
    })
    it('a completion is forgotten after its time', async () => {
      const s = await store(SHORT)
      const k = key('ttl')
      await s.claim(k, 'a')
      await s.complete(k, 'a')
      assert.equal(await s.claim(k, 'b'), 'completed')
      await sleep(SHORT.ttlMs + 150)
      assert.equal(await s.claim(k, 'b'), 'claimed')
    })
  })
}

function dedupeRaces(
  createStore: (timing: DedupeTiming) => DedupeStore | Promise<DedupeStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  const store = async (timing = LONG) => await createStore(timing)

  describe(options.name ?? 'DedupeStore conformance', () => {
    it('race: 50 parallel claims of one key, exactly one claimed', async () => {
      const s = await store()
      const k = key('race')
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => Promise.resolve(s.claim(k, `o${i}`))),
      )
      assert.equal(results.filter((r) => r === 'claimed').length, 1)
      assert.equal(results.filter((r) => r === 'in_progress').length, 49)
    })

    it('race: 20 keys x 10 parallel claims each, exactly one claimed per key', async () => {
      const s = await store()
      const keys = Array.from({ length: 20 }, (_, i) => key(`many${i}`))
      const calls = keys.flatMap((k) =>
        Array.from({ length: 10 }, (_, i) =>
          Promise.resolve(s.claim(k, `o${i}`)).then((r) => [k, r] as const),
        ),
      )
      const results = await Promise.all(calls)
      for (const k of keys) {
        const claimed = results.filter(([rk, r]) => rk === k && r === 'claimed')
        assert.equal(claimed.length, 1, k)
      }
    })

    it('race: claims racing a release of a lapsed claim and its retry: never two holders at once', async () => {
      const s = await store(SHORT)
      for (let round = 0; round < 3; round++) {
        const k = key(`churn${round}`)
        assert.equal(await s.claim(k, 'first'), 'claimed')
        await sleep(SHORT.leaseMs + 100)
        // The late holder releases and completes while 20 owners claim the lapsed key.
        const racing = Date.now()
        const racers = Array.from({ length: 20 }, (_, i) => Promise.resolve(s.claim(k, `r${i}`)))
        const late = [s.release(k, 'first'), s.complete(k, 'first')]
        const results: ClaimResult[] = await Promise.all(racers)
        const answered = Date.now() - racing
        await Promise.all(late)
        const claimed = results.filter((r) => r === 'claimed').length
        // One holder a lease: on a machine slow enough that the claims took longer than a
        // lease, a later one may rightly take the key a winner left to lapse, never sooner.
        const most = 1 + Math.floor(answered / SHORT.leaseMs)
        assert.ok(
          claimed <= most,
          `${claimed} owners claimed one key within ${answered} ms (leases of ${SHORT.leaseMs} ms)`,
        )
        // Either a racer holds it (claimed once) or the late complete landed first (all completed).
        if (claimed === 0)
          assert.ok(
            results.every((r) => r === 'completed'),
            results.join(','),
          )
        else {
          // Still within the winner's lease, no one else may claim it (past it, a claim may:
          // the lease lapsed, as on a slow machine it can before this line runs).
          const after = await s.claim(k, 'after')
          if (Date.now() - racing < SHORT.leaseMs) assert.notEqual(after, 'claimed')
        }
      }
    })
  })
}

/** Keys alike but for a lone surrogate, `:`, `{`, `}` or length (alike-keys.ts): kept apart. */
export function dedupeAlikeKeys(
  createStore: (timing: DedupeTiming) => DedupeStore | Promise<DedupeStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  const store = async () => await createStore(LONG)
  describe(options.name ?? 'DedupeStore conformance', () => {
    it('keys that differ only in lone surrogates, :, {, } or length: each its own claim', async () => {
      const s = await store()
      const keys = alikeKeys(key('alike'))
      for (const k of keys) assert.equal(await s.claim(k, 'a'), 'claimed', JSON.stringify(k))
      await s.complete(keys[0]!, 'a')
      assert.equal(await s.claim(keys[0]!, 'b'), 'completed')
      for (const k of keys.slice(1)) assert.equal(await s.claim(k, 'b'), 'in_progress')
    })
  })
}
