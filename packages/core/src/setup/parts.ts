import { ConfigError } from '../errors/errors.js'
import { createDeliveryLedger, type DeliveryLedger } from '../ledger/ledger.js'
import type { DeliveryLedgerOptions } from '../ledger/options.js'
import type { Logger } from '../log.js'
import type { WebhookSubscriptions } from '../subscriptions/options.js'
import { MemorySweepStore } from '../sweep/store.js'
import type { TokenManager } from '../tokens/contract.js'
import { RefreshAhead, type RefreshAheadOptions } from '../tokens/refresh-ahead.js'
import type { StoreBundle } from './stores.js'

// The parts `createScheduling` makes from an option that names them: the ledger on the stores'
// ledger store, the refresh ahead on the stores' sweep store.

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

/** The refresh ahead `createScheduling`'s option names, on the stores' sweep store. */
export function refreshAheadOf(
  option: RefreshAheadOption | undefined,
  tokens: TokenManager,
  stores: StoreBundle,
  subscriptions: WebhookSubscriptions | undefined,
  onConnectionChange: RefreshAheadOptions['onConnectionChange'],
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
  return new RefreshAhead(tokens, {
    ...settings,
    keys,
    store: stores.sweeps ?? new MemorySweepStore(),
    ...(onConnectionChange === undefined ? {} : { onConnectionChange }),
  })
}
