import { createDeliveryLedger } from '../catch-up/ledger.js'
import { pendingRun } from '../catch-up/progress.js'
import { ConfigError } from '../errors/errors.js'
import type { HealthReport } from '../health/report.js'
import type { DeliveryLedger } from '../ledger/ledger.js'
import type { DeliveryLedgerOptions } from '../ledger/options.js'
import type { Logger } from '../log.js'
import type { WebhookSubscriptions } from '../subscriptions/options.js'
import { type SweepOptions, sweepSettings } from '../subscriptions/sweep-options.js'
import type { SweepStore } from '../sweep/store.js'
import type { TokenManager } from '../tokens/contract.js'
import { RefreshAhead, type RefreshAheadOptions } from '../tokens/refresh-ahead.js'
import type { WebhookHandler } from '../webhooks/contract.js'
import {
  DEFAULT_MAX_BEHIND_MS,
  describeMs,
  type PendingCatchUp,
  type PeriodicTask,
  PeriodicWork,
} from './periodic.js'
import type { StoreBundle } from './stores.js'

// The parts `createScheduling` makes from an option that names them: the ledger on the stores'
// ledger store, the refresh ahead on the stores' sweep store, and the periodic work over both.

/** What `createScheduling({ refreshAhead })` takes. */
export type RefreshAheadOption =
  | true
  | (Omit<RefreshAheadOptions, 'store' | 'keys' | 'onConnectionChange'> &
      Partial<Pick<RefreshAheadOptions, 'keys'>>)

/** The ledger `createScheduling`'s option names: none, one on the stores' ledger store, or its own. */
export function ledgerOf(
  option: boolean | Omit<DeliveryLedgerOptions, 'store'> | DeliveryLedger | undefined,
  stores: StoreBundle,
  logger: Logger | undefined,
): DeliveryLedger | undefined {
  if (option === undefined || option === false) return undefined
  if (option !== true && (typeof option !== 'object' || option === null))
    throw new ConfigError(
      'createScheduling: ledger is true, the options of createDeliveryLedger (without store), or a ledger it made.',
    )
  // A ledger made apart (`createDeliveryLedger`) is taken as it is.
  if (option !== true && typeof (option as DeliveryLedger).deliver === 'function')
    return option as DeliveryLedger
  const settings = option === true ? {} : (option as Omit<DeliveryLedgerOptions, 'store'>)
  if ('store' in settings)
    throw new ConfigError(
      'createScheduling: the ledger records in stores.ledger: give the store there (memoryStores, redisStores and postgresStores make one), not in ledger.store.',
    )
  const cipher = settings.cipher ?? stores.cipher
  const ledgerLogger = settings.logger ?? logger
  return createDeliveryLedger({
    ...settings,
    store: stores.ledger,
    ...(cipher === undefined ? {} : { cipher }),
    ...(ledgerLogger === undefined ? {} : { logger: ledgerLogger }),
  })
}

/** The refresh ahead `createScheduling`'s option names, on the app's sweep store and clock. */
export function refreshAheadOf(
  option: RefreshAheadOption | undefined,
  tokens: TokenManager,
  subscriptions: WebhookSubscriptions | undefined,
  app: {
    store: SweepStore
    onConnectionChange: RefreshAheadOptions['onConnectionChange']
    now: (() => number) | undefined
  },
): RefreshAhead | undefined {
  if (option === undefined) return undefined
  const settings = option === true ? {} : option
  const keys =
    settings.keys ??
    (subscriptions === undefined ? undefined : (phases) => subscriptions.keys(phases))
  if (keys === undefined)
    throw new ConfigError(
      'createScheduling: refreshAhead needs the connected keys: give webhookUrl (the subscriptions know them) or refreshAhead.keys.',
    )
  const { onConnectionChange, now } = app
  return new RefreshAhead(tokens, {
    ...(now === undefined ? {} : { now }),
    ...settings,
    keys,
    store: app.store,
    ...(onConnectionChange === undefined ? {} : { onConnectionChange }),
  })
}

/** The sweep `createScheduling`'s option names, on the app's sweep store and ledger. */
export function sweepOf(
  option: true | Omit<SweepOptions, 'store' | 'ledger'> | undefined,
  store: SweepStore,
  ledger: DeliveryLedger | undefined,
): SweepOptions | undefined {
  if (option === undefined) return undefined
  return { ...(option === true ? {} : option), store, ...(ledger === undefined ? {} : { ledger }) }
}

/**
 * The catch-up run left open in the sweep store, for the periodic work to go on with: with a
 * ledger and the subscriptions (whose accounts it lists) only.
 */
export function pendingCatchUpOf(
  ledger: DeliveryLedger | undefined,
  subscriptions: WebhookSubscriptions | undefined,
  store: SweepStore,
  webhooks: () => Pick<WebhookHandler, 'catchUp'>,
): PendingCatchUp | undefined {
  if (ledger === undefined || subscriptions === undefined) return undefined
  return {
    pending: () => pendingRun(store),
    run: (since, budgetMs) => webhooks().catchUp({ since, progress: store, budgetMs }),
  }
}

/** The periodic work of an app: its refresh ahead and its sweep, when configured. */
export function periodicOf(
  refreshAhead: RefreshAhead | undefined,
  subscriptions: WebhookSubscriptions | undefined,
  sweep: SweepOptions | undefined,
  logger: Logger | undefined,
  catchUp?: PendingCatchUp,
): PeriodicWork {
  const tasks: PeriodicTask[] = []
  if (refreshAhead !== undefined)
    tasks.push({
      name: 'refreshAhead',
      checkpoint: 'refresh',
      shards: refreshAhead.shards,
      step: (options) => refreshAhead.step(options),
    })
  if (subscriptions !== undefined && sweep !== undefined)
    tasks.push({
      name: 'sweep',
      checkpoint: 'sweep',
      shards: sweepSettings(sweep).shards,
      step: (options) => subscriptions.sweep(options),
    })
  return new PeriodicWork(tasks, logger, catchUp)
}

/**
 * The periodic work's part of `health()`: each task's shared checkpoints within
 * `maxBehindMs` of now, whichever instance stepped them last.
 */
export function periodicHealth(
  work: PeriodicWork,
  store: SweepStore,
  now: () => number,
  maxBehindMs = DEFAULT_MAX_BEHIND_MS,
): { health(): Promise<HealthReport> } | undefined {
  if (!work.configured) return undefined
  return {
    async health() {
      const started = performance.now()
      const by = await work.behind(store, now())
      const checks = Object.entries(by).map(([name, behindMs]) => {
        const ok = behindMs <= maxBehindMs
        const detail = ok
          ? `${describeMs(behindMs)} behind`
          : `${describeMs(behindMs)} behind (more than ${describeMs(maxBehindMs)}): call runDue() more often, or give it a larger budgetMs`
        return { name, ok, ms: Math.round(performance.now() - started), detail }
      })
      return { ok: checks.every((c) => c.ok), checks }
    },
  }
}
