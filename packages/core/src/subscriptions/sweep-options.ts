import { ConfigError } from '../errors/errors.js'
import type { SweepStore } from '../sweep/store.js'
import { wholeNumber } from '../validate.js'

// What a sweep is told and what it tells: the options of `createWebhookSubscriptions({ sweep })`
// checked, with their defaults.

const DAY = 86_400_000

export interface SweepOptions {
  /** The shards' leases and checkpoints, shared by the instances (`MemorySweepStore` for one). */
  store: SweepStore
  /** Every account is checked, or found healthy, once per period, in ms. Default a day. */
  periodMs?: number
  /**
   * An account whose webhook delivered a verified delivery within this many ms of its turn
   * needs no list: it works. Default `periodMs`. Needs `lastDelivery`.
   */
  healthyWithin?: number
  /**
   * The delivery ledger: an account's newest entry the service delivered (not a replay's or a
   * catch-up's) is its last verified delivery. Without it (or `lastDelivery`) every account is
   * listed in turn.
   */
  ledger?: LedgerOfDeliveries
  /** When the account's webhook last delivered a verified delivery, in ms, if not from `ledger`. */
  lastDelivery?: (key: string) => Promise<number | undefined>
  /** Shards the accounts are spread over, each stepped by one instance at a time. Default 16. */
  shards?: number
  /**
   * The most of the period one step covers, in ms (default a hundredth): a step killed halfway
   * is done again by the next, so at most that share of the accounts is listed twice.
   */
  maxStepMs?: number
  /** A shard's lease, renewed while its step runs, in ms. Default 60 000. */
  leaseTtlMs?: number
}

/** What a sweep reads of the delivery ledger: an account's newest entries. */
export interface LedgerOfDeliveries {
  list(filter: { account: string; limit: number }): Promise<{
    entries: readonly { source?: string; receivedAt: number }[]
  }>
}

/** The newest entry the service delivered to the account, of its last 20. */
async function lastDeliveryIn(ledger: LedgerOfDeliveries, key: string) {
  const { entries } = await ledger.list({ account: key, limit: 20 })
  return entries.find((e) => e.source === 'webhook')?.receivedAt
}

export interface SweepSettings {
  store: SweepStore
  periodMs: number
  healthyWithin: number
  lastDelivery: ((key: string) => Promise<number | undefined>) | undefined
  shards: number
  maxStepMs: number
  leaseTtlMs: number
}

/** The sweep's options checked, with their defaults. */
export function sweepSettings(options: SweepOptions): SweepSettings {
  const who = 'createWebhookSubscriptions'
  const store = options?.store as Partial<SweepStore> | undefined
  const methods = ['acquireLease', 'releaseLease', 'checkpoint', 'setCheckpoint'] as const
  if (methods.some((m) => typeof store?.[m] !== 'function'))
    throw new ConfigError(
      `${who}: sweep.store must be a SweepStore (${methods.join(', ')}): MemorySweepStore, or your store's.`,
    )
  if (options.lastDelivery !== undefined && typeof options.lastDelivery !== 'function')
    throw new ConfigError(`${who}: sweep.lastDelivery must be a function of the account's key.`)
  const { ledger } = options
  if (ledger !== undefined && typeof ledger?.list !== 'function')
    throw new ConfigError(
      `${who}: sweep.ledger must be the delivery ledger (createDeliveryLedger).`,
    )
  const periodMs = wholeNumber(who, 'sweep.periodMs', options.periodMs, DAY, { unit: 'ms' })
  return {
    store: options.store,
    periodMs,
    healthyWithin: wholeNumber(who, 'sweep.healthyWithin', options.healthyWithin, periodMs, {
      unit: 'ms',
      min: 0,
    }),
    lastDelivery:
      options.lastDelivery ??
      (ledger === undefined ? undefined : (key: string) => lastDeliveryIn(ledger, key)),
    shards: wholeNumber(who, 'sweep.shards', options.shards, 16),
    maxStepMs: wholeNumber(who, 'sweep.maxStepMs', options.maxStepMs, Math.ceil(periodMs / 100), {
      unit: 'ms',
    }),
    leaseTtlMs: wholeNumber(who, 'sweep.leaseTtlMs', options.leaseTtlMs, 60_000, { unit: 'ms' }),
  }
}
