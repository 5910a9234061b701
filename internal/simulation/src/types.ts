// What a simulation is told, and what it tells.

export interface SimulationOptions {
  accounts: number
  seed: number
  /**
   * Days simulated. Default 2. Webhooks are disabled early enough for their repair to be judged
   * within the run: before its end less a period, two steps and an outage.
   */
  days?: number
  /** Share of the accounts that receive deliveries, each `deliveriesPerDay` on average. */
  activeShare?: number
  deliveriesPerDay?: number
  /** Webhooks the service disables at random times. Default a thousandth of the accounts. */
  disables?: number
  /** The app's cap and the service's capacity, in requests a second; its latency in ms. */
  capPerSecond?: number
  capacity?: number
  latencyMs?: number
  /** Outages of 30 minutes, one a day at a random time. Default true. */
  outages?: boolean
  /** Accounts a step checks at once. Default 4. */
  concurrency?: number
  /**
   * Refresh ahead too (`refresh.ts`): every account connected in the minute before the start,
   * stepped every minute, the app reading active accounts' tokens on the request path.
   */
  refreshAhead?: boolean
  /**
   * Catch-up too (`catch-up.ts`): each outage reschedules some active accounts' Events (their
   * deliveries lost), and after it the app catches every account up from the outage's start,
   * the run stopped halfway and taken up again.
   */
  catchUp?: boolean
  /** Accounts a catch-up lists at once. Default 4 (catch-up's own default). */
  catchUpConcurrency?: number
  /**
   * The periodic work called as a cron calls `runDue()`, every `cadenceMs`: each call steps the
   * sweep (and refresh ahead) until caught up. Default none: one sweep step every hundredth of
   * the day and one refresh step every minute, as a timer of each would.
   */
  cadenceMs?: number
}

/** What catch-up did, when the simulation ran it. */
export interface CatchUpFigures {
  /** Runs after outages (each stopped halfway and taken up: two calls). */
  runs: number
  /** Calls that failed where none should (the first sync, or a call taking a run up). */
  failedRuns: number
  /** Deliveries a run fed that failed (the ledger refused them, a handler threw). */
  failedDeliveries: number
  /** Event list requests a run, per account (an account with nothing new: 2). */
  listsPerAccountPerRun: number
  /** Accounts the call that took a run up listed again (the stopped one had listed them). */
  listedTwice: number
  /** Changes the outages made, and those the app had not applied by the end. */
  changes: number
  missed: number
  /** Virtual time a run took, in ms (the longest). */
  longestRunMs: number
}

/** What refresh ahead did, when the simulation ran it. */
export interface RefreshFigures {
  /** Token calls of refresh ahead, and of the request path (refreshes the app waited on). */
  tokenCalls: number
  requestPathRefreshes: number
  /** Refreshes that failed (tried again at the next step), and connections lost at the end. */
  failed: number
  lost: number
  /** The busiest minute's token calls against the mean minute's, over the run. */
  busiestMinuteToMean: number
}

export interface SimulationReport {
  accounts: number
  days: number
  requests: {
    list: number
    create: number
    delete: number
    events: number
    throttled: number
    unavailable: number
  }
  /** List requests a day, per account that received deliveries, and per one that did not. */
  listsPerActiveAccountPerDay: number
  listsPerQuietAccountPerDay: number
  /** Webhooks disabled, and how long each took to be made again, in ms (of those repaired). */
  disabled: number
  repaired: number
  repairMs: { p50: number; p99: number; max: number }
  /**
   * Of the disabled, those of quiet accounts repaired within one period, and within a period
   * and the time a check can be held up: two steps and an outage (a check that fails is tried
   * again at the next step).
   */
  quietRepairedWithinPeriod: number
  quietRepairedWithinBound: number
  quietDisabled: number
  boundMs: number
  peakPerSecond: number
  capPerSecond: number
  /** Checks that failed (an outage, 429s past the client's retries), and steps run. */
  failedChecks: number
  steps: number
  heapBytesPerAccount: number
  wallMs: number
  refresh?: RefreshFigures
  catchUp?: CatchUpFigures
}
