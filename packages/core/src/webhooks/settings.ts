import { catchUpOf } from '../catch-up/loaders.js'
import { type DedupeStore, MemoryDedupeStore } from '../claims/dedupe.js'
import { type DeliveryRecord, recordOf } from '../claims/record.js'
import { ConfigError } from '../errors/errors.js'
import type { DeliveryLedger } from '../ledger/ledger.js'
import { checkLogger, type Logger } from '../log.js'
import { wholeNumber } from '../validate.js'
import { BodyBudget } from './body/budget.js'
import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_MAX_PENDING_BYTES,
  DEFAULT_SIGNATURE_HEADER,
  DEFAULT_WEBHOOK_ID_HEADER,
  DEFAULT_WEBHOOK_PATH,
  HANDLER_CLAIM,
} from './defaults.js'
import type {
  SubscriptionLookup,
  WebhookHandlerOptions,
  WebhookHandlerRestOptions,
} from './options.js'
import type { WebhookQueue } from './queue.js'
import {
  assertSecretSource,
  LOOKUP_HINT,
  SecretIdentities,
  type SecretSource,
  staticSecrets,
  WORKER_HINT,
} from './secrets.js'

// The settings a handler runs with, resolved once from its options: checked, defaults filled in.

/** The options with every default applied, as the handler uses them. */
export interface Settings {
  secret: SecretSource
  /** Connected accounts' webhooks, when given: they take the place of `secret`. */
  subscriptions: SubscriptionLookup | undefined
  /** The usable secrets when `secret` is not a lookup, computed once. */
  fixedSecrets: readonly string[] | undefined
  path: string
  limit: number
  bodyTimeoutMs: number
  /** The bytes held by bodies still arriving (option `maxPendingBytes`), shared by all requests. */
  budget: BodyBudget
  dedupe: DedupeStore | undefined
  /**
   * With a secret lookup, the identities of the secrets that verified deliveries: dedupe keys
   * are the payload id under that identity (two webhooks may send one payload id), never under
   * the webhook id header, which nothing signs. `undefined` with fixed secrets: the signed
   * payload id alone is the key.
   */
  identities: SecretIdentities | undefined
  signatureHeader: string
  webhookIdHeader: string
  queue: WebhookQueue | undefined
  ledger: DeliveryLedger | undefined
  /** Where each delivery is recorded: the ledger, else the dedupe claim, else nowhere. */
  record: DeliveryRecord
  /** The `logger` option; `undefined` lets the adapter's or the console's apply. */
  logger: Logger | undefined
  /** How old a body may be to run (option `maxAgeMs`); `undefined`: any age. */
  maxAgeMs: number | undefined
}

/** A request path without its query string or a trailing slash. */
export function normalizePath(path: string): string {
  if (path.length > 1 && path.indexOf('?') < 0 && !path.endsWith('/')) return path
  const q = path.indexOf('?')
  let p = q >= 0 ? path.slice(0, q) : path
  if (p === '') p = '/'
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1)
  return p
}

function positiveInteger(value: number | undefined, name: string, unit: string): void {
  wholeNumber('createWebhookHandler', name, value, 0, { unit })
}

function isSecretSource(input: unknown): input is SecretSource {
  return typeof input === 'string' || typeof input === 'function' || Array.isArray(input)
}

/**
 * The options from `(secret)`, `(options)` or `(secret, options)`. An `undefined` first
 * argument is a secret that was not set (an unset environment variable, usually), and gets
 * the same message as an empty one.
 */
function optionsOf(input: unknown, rest: unknown): WebhookHandlerOptions {
  if (rest !== undefined && (typeof rest !== 'object' || rest === null || Array.isArray(rest))) {
    throw new ConfigError(
      'createWebhookHandler: the second argument must be an options object ({ path, on, ... }).',
    )
  }
  if (input === undefined || input === null || isSecretSource(input)) {
    const more = rest as Partial<WebhookHandlerOptions> | undefined
    if (more?.secret !== undefined) {
      throw new ConfigError(
        'createWebhookHandler: the secret is given twice, as the first argument and as the ' +
          'secret option: pass it once.',
      )
    }
    return { ...more, secret: input as SecretSource }
  }
  if (typeof input !== 'object') {
    throw new ConfigError('createWebhookHandler: pass the signing secret or an options object.')
  }
  if (rest !== undefined) {
    throw new ConfigError(
      'createWebhookHandler: options are given twice: pass (secret, options) or (options), not (options, options).',
    )
  }
  return input as WebhookHandlerOptions
}

/** Checks the options (throwing `ConfigError` with the fix) and applies the defaults. */
export function resolveSettings(
  input: SecretSource | WebhookHandlerOptions | undefined,
  rest?: WebhookHandlerRestOptions,
): Settings {
  const options = optionsOf(input, rest)
  const subscriptions = options.subscriptions
  const secret = secretOf(options)
  if (
    options.path !== undefined &&
    (typeof options.path !== 'string' || !options.path.startsWith('/'))
  ) {
    throw new ConfigError(
      `createWebhookHandler: path must start with "/", got "${String(options.path)}".`,
    )
  }
  positiveInteger(options.bodyLimit, 'bodyLimit', 'bytes')
  positiveInteger(options.bodyTimeoutMs, 'bodyTimeoutMs', 'milliseconds')
  positiveInteger(options.maxPendingBytes, 'maxPendingBytes', 'bytes')
  const limit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  const maxPending = options.maxPendingBytes ?? Math.max(DEFAULT_MAX_PENDING_BYTES, limit)
  if (maxPending < limit) {
    throw new ConfigError(
      `createWebhookHandler: maxPendingBytes (${maxPending}) must be at least bodyLimit (${limit}), or no body of the largest size could ever be read.`,
    )
  }
  if (options.queue !== undefined && typeof options.queue?.enqueue !== 'function') {
    throw new ConfigError('createWebhookHandler: queue must have an enqueue(event) method.')
  }
  const dedupe =
    options.dedupe === false || options.ledger !== undefined
      ? undefined
      : (options.dedupe ?? new MemoryDedupeStore())
  const ledger = checkLedger(options.ledger)
  return {
    secret,
    subscriptions,
    fixedSecrets:
      subscriptions === undefined && options.verify !== false ? staticSecrets(secret) : undefined,
    path: normalizePath(options.path ?? DEFAULT_WEBHOOK_PATH),
    limit,
    bodyTimeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    budget: new BodyBudget(maxPending),
    dedupe,
    identities: identitiesOf(options),
    signatureHeader: options.signatureHeader ?? DEFAULT_SIGNATURE_HEADER,
    webhookIdHeader: options.webhookIdHeader ?? DEFAULT_WEBHOOK_ID_HEADER,
    queue: options.queue,
    ledger,
    record: recordOf(ledger, dedupe, HANDLER_CLAIM),
    logger: checkLogger(options.logger, 'createWebhookHandler'),
    maxAgeMs: maxAgeOf(options.maxAgeMs, ledger, dedupe),
  }
}

/**
 * Where the secrets come from, checked: the option's source; with subscriptions, none (every
 * delivery's comes from its webhook); for a worker's handler (`verify: false`), none at all
 * (every request is refused).
 */
function secretOf(options: WebhookHandlerOptions): SecretSource {
  const { subscriptions } = options
  if (subscriptions !== undefined) {
    if (typeof subscriptions?.lookup !== 'function') {
      throw new ConfigError(
        'createWebhookHandler: subscriptions must be what createWebhookSubscriptions returns.',
      )
    }
    if (options.secret !== undefined) {
      throw new ConfigError(
        'createWebhookHandler: pass secret or subscriptions, not both: with subscriptions, each delivery is verified with the secret of the webhook it names.',
      )
    }
  } else if (options.verify === false) {
    if (options.secret !== undefined) {
      throw new ConfigError(
        'createWebhookHandler: verify: false is for a queue worker, which verifies nothing: leave the secret out.',
      )
    }
  } else assertSecretSource(options.secret, 'createWebhookHandler', LOOKUP_HINT + WORKER_HINT)
  if (options.verify !== undefined && typeof options.verify !== 'boolean') {
    throw new ConfigError('createWebhookHandler: verify must be true or false.')
  }
  return subscriptions === undefined && options.verify !== false ? options.secret! : () => undefined
}

/** With a secret lookup, the identities of the secrets that verify (`Settings.identities`). */
function identitiesOf(options: WebhookHandlerOptions): SecretIdentities | undefined {
  return typeof options.secret === 'function' &&
    options.subscriptions === undefined &&
    options.verify !== false
    ? new SecretIdentities()
    : undefined
}

/** Option `maxAgeMs`, checked; its default the record's horizon (old-body.ts). */
function maxAgeOf(
  maxAgeMs: number | false | undefined,
  ledger: DeliveryLedger | undefined,
  dedupe: DedupeStore | undefined,
): number | undefined {
  if (maxAgeMs === false) return undefined
  positiveInteger(maxAgeMs, 'maxAgeMs', 'milliseconds')
  const ttl = dedupe?.ttlMs
  return maxAgeMs ?? ledger?.horizonMs ?? (typeof ttl === 'number' && ttl > 0 ? ttl : DAY_MS)
}

const DAY_MS = 86_400_000

function checkLedger(ledger: DeliveryLedger | undefined): DeliveryLedger | undefined {
  // Made by createDeliveryLedger: it notes how the handler's catchUp() loads catch-up.
  if (ledger !== undefined && catchUpOf(ledger) === undefined)
    throw new ConfigError('createWebhookHandler: ledger must come from createDeliveryLedger().')
  return ledger
}
