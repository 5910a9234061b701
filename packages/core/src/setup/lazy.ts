import { deferredObject } from '../deferred.js'
import { ConfigError } from '../errors/errors.js'
import { DeferredOAuthRoutes } from '../oauth/deferred.js'
import type { OAuthRoutes } from '../oauth/routes.js'
import type { WebhookHandler } from '../webhooks/contract.js'
import { DeferredWebhookHandler } from '../webhooks/deferred.js'
import type { Scheduling, SchedulingOptions } from './scheduling.js'

// `lazyScheduling(async () => options)`: the whole toolkit loaded at first use. A serverless
// route starts with what its module imports; `createScheduling` imports every part (the ledger,
// the subscriptions, the refresh ahead, the sweep, the page) and the app's stores come with
// their driver. Here nothing of them loads at import: the options function runs at the first
// delivery, request or call, may itself import the stores (`await import('pg')`), and the parts
// load with `createScheduling` then. Its members that return promises wait for that; the others
// are read once it is done (`await scheduling.ready()`).

/** A `Scheduling` whose options are read, and whose parts load, at first use. */
export interface LazyScheduling extends Scheduling {
  /**
   * Reads the options and builds the toolkit, once (a failure is tried again by the next
   * call): the members that are not promises (`tokens`, `client()`, `subscriptions`, ...) are
   * read after it. A delivery, a request of the OAuth routes, `runDue()` and `health()` wait
   * for it themselves.
   */
  ready(): Promise<Scheduling>
}

/** What a member read before the build tells. */
function notReady(): Error {
  return new ConfigError(
    'lazyScheduling: this member is read before the options were read and the toolkit loaded: await scheduling.ready() first (deliveries, the OAuth routes, runDue() and health() wait themselves).',
  )
}

/**
 * `createScheduling` for a route that loads only what it uses: given a function (it may be
 * async, and import the app's stores), it reads the options at the first delivery, request or
 * call, and loads the toolkit's parts then; a missing option is told there, with
 * `createScheduling`'s message. `createWebhookHandler(scheduling)` and
 * `createOAuthRoutes(scheduling)` made of it at import wait for it the same way.
 *
 * @example
 * ```ts
 * export const scheduling = lazyScheduling(async () => {
 *   const { postgresStores } = await import('@scheduling-kit/postgres')
 *   const { default: pg } = await import('pg')
 *   const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 *   return { ...options, stores: postgresStores({ pool }) }
 * })
 * ```
 */
export function lazyScheduling(
  read: () => SchedulingOptions | Promise<SchedulingOptions>,
): LazyScheduling {
  if (typeof read !== 'function')
    throw new ConfigError(
      'lazyScheduling: pass a function giving the options (it may be async), read at first use.',
    )
  return deferredObject<LazyScheduling>(
    async () => {
      const options = await read()
      const { createScheduling } = await import('./scheduling.js')
      const built = createScheduling(options)
      return { ...built, ready: async () => built }
    },
    (_built, ready, now) => {
      // A part made of the built object: at once when it is built, else once it is.
      const of =
        <R>(make: (built: Scheduling) => R) =>
        (): R | Promise<R> => {
          const built = now()
          return built === undefined ? ready().then(make) : make(built)
        }
      return {
        members: {
          ready,
          webhooks: new DeferredWebhookHandler(
            of((built) => built.webhooks),
            notReady,
          ),
          runDue: async (options) => (await ready()).runDue(options),
          health: async (options) => (await ready()).health(options),
        },
        wait: {
          webhooks: (make: (options: Scheduling) => WebhookHandler) =>
            new DeferredWebhookHandler(of(make), notReady),
          oauth: (make: (options: Scheduling) => OAuthRoutes<unknown>) =>
            new DeferredOAuthRoutes(of(make), notReady),
        },
      }
    },
    notReady,
  )
}
