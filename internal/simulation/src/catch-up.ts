import {
  createDeliveryLedger,
  createWebhookHandler,
  MemoryLedgerStore,
  MemorySweepStore,
  type WebhookHandler,
} from '@scheduling-kit/core'
import type { CatchUpFigures } from './types.js'
import { DAY, type World } from './world.js'

// Catch-up in the simulation: the real handler, ledger and catch-up over the service model's
// Events. The app syncs every account once at the start; each outage reschedules some active
// accounts' Events (their deliveries lost); five minutes after it ends the app catches every
// account up from the outage's start, with the sweep's kind of store as its progress: the
// first call stops halfway (a deploy, a crash), the next takes the run up.

const quiet = { debug() {}, info() {}, warn() {}, error() {} }

export interface CatchUpRun {
  /** Each account's Event ahead as the app applied it: its start. */
  applied: Map<string, string>
  /** The accounts whose Event an outage rescheduled. */
  changed: Set<string>
  figures: Omit<CatchUpFigures, 'listsPerAccountPerRun' | 'missed'> & { lists: number }
}

/** The app: its handler over the real ledger, and the accounts given to the next call. */
interface App {
  handler: WebhookHandler
  /** The next call's accounts stop coming after this many (a crash halfway). */
  stopAfter: number
}

export function scheduleCatchUp(
  world: World,
  pending: Promise<void>[],
  concurrency = 4,
): CatchUpRun {
  const { clock, events, outages, start } = world
  if (events === undefined) throw new Error('catch-up needs the Events model (option catchUp)')
  const run: CatchUpRun = {
    applied: new Map(),
    changed: new Set(),
    figures: {
      runs: 0,
      failedRuns: 0,
      failedDeliveries: 0,
      listedTwice: 0,
      changes: 0,
      longestRunMs: 0,
      lists: 0,
    },
  }
  const app = buildApp(world, run.applied)
  const progress = new MemorySweepStore({ now: clock.now })
  // The first sync: every Event ahead applied once, so a run after an outage finds changes.
  clock.at(start, () =>
    pending.push(
      app.handler.catchUp({ since: start - DAY, concurrency }).then(
        (report) => {
          run.figures.failedDeliveries += report.failed
        },
        () => {
          run.figures.failedRuns++
        },
      ),
    ),
  )
  scheduleChanges(world, run)
  for (const outage of outages)
    clock.at(outage.to + 300_000, () => {
      pending.push(catchUpAfter(world, app, run, { since: outage.from, progress, concurrency }))
    })
  return run
}

function buildApp(world: World, applied: Map<string, string>): App {
  const { clock, keys } = world
  const app: App = { handler: undefined as unknown as WebhookHandler, stopAfter: Infinity }
  // The accounts, as the subscriptions give them, stopped where `stopAfter` was when the call
  // began: a run still under way (the first sync at a million accounts lasts past the first
  // outage) keeps its own.
  const subscriptions = {
    ...world.subscriptions,
    keys: async function* () {
      const stop = app.stopAfter
      let given = 0
      for (const key of keys) {
        if (given++ === stop) throw new Error('the process stopped')
        yield key
      }
    },
  }
  app.handler = createWebhookHandler({
    subscriptions,
    // Room for every active account's Event and its changes: the store's defaults (100,000
    // entries, 64 MiB) suit one process's deliveries, not a million accounts' first sync.
    ledger: createDeliveryLedger({
      store: new MemoryLedgerStore({
        maxEntries: 4 * keys.length + 10_000,
        maxBytes: 8 * 1024 ** 3,
      }),
      logger: quiet,
      now: clock.now,
    }),
    logger: quiet,
    onAny: (event, context) => {
      const payload = event.payload as { start_at?: string }
      if (context.account !== undefined && payload.start_at !== undefined)
        applied.set(context.account, payload.start_at)
    },
  })
  return app
}

/** During each outage, a hundredth of the active accounts see their Event ahead moved. */
function scheduleChanges(world: World, run: CatchUpRun): void {
  const { clock, keys, events, outages, random } = world
  const activeKeys = keys.filter(world.active)
  const perOutage = Math.max(1, Math.round(activeKeys.length / 100))
  for (const outage of outages)
    for (let i = 0; i < perOutage && activeKeys.length > 0; i++) {
      const key = activeKeys[Math.floor(random() * activeKeys.length)]!
      const at = outage.from + Math.floor(random() * (outage.to - outage.from))
      const to = at + 4 * DAY + Math.floor(random() * DAY)
      clock.at(at, () => {
        events!.reschedule(key, to)
        run.changed.add(key)
        run.figures.changes++
      })
    }
}

/** A run after an outage: the first call stops halfway, the next takes the run up. */
async function catchUpAfter(
  world: World,
  app: App,
  run: CatchUpRun,
  options: { since: number; progress: MemorySweepStore; concurrency: number },
): Promise<void> {
  const { clock, keys, events } = world
  const began = clock.now()
  const lists = [new Set<string>(), new Set<string>()]
  const before = world.service.counts.events
  events!.onList = (account) => lists[0]!.add(account)
  app.stopAfter = Math.floor(keys.length / 2)
  const first = await app.handler.catchUp(options).catch(() => undefined)
  events!.onList = (account) => lists[1]!.add(account)
  app.stopAfter = Number.POSITIVE_INFINITY
  const taken = await app.handler.catchUp(options).catch(() => {
    run.figures.failedRuns++
  })
  run.figures.failedDeliveries += (first?.failed ?? 0) + (taken?.failed ?? 0)
  events!.onList = undefined
  run.figures.runs++
  run.figures.lists += world.service.counts.events - before
  for (const account of lists[1]!) if (lists[0]!.has(account)) run.figures.listedTwice++
  run.figures.longestRunMs = Math.max(run.figures.longestRunMs, clock.now() - began)
}

/** What catch-up did: lists a run per account, accounts listed twice, changes never applied. */
export function judgeCatchUp(world: World, run: CatchUpRun): CatchUpFigures {
  const { lists, ...figures } = run.figures
  let missed = 0
  for (const key of run.changed)
    if (run.applied.get(key) !== new Date(world.events!.startOf(key)).toISOString()) missed++
  return {
    ...figures,
    listsPerAccountPerRun: figures.runs === 0 ? 0 : lists / figures.runs / world.keys.length,
    missed,
  }
}
