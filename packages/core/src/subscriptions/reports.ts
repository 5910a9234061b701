// What `reconcile` and a sweep's step tell: each account checked, and the run's counts.

/** One account in a `reconcile` report. */
export interface ReconcileAccount {
  key: string
  /** `ok` (nothing to do), `repaired`, `removed` (cleaned up after `remove`), or why it could not be checked. */
  outcome:
    | 'ok'
    | 'repaired'
    | 'removed'
    | 'busy'
    | 'reauthorization_required'
    | 'not_connected'
    | 'other_app'
    | 'failed'
  /** What was done, in words: `created wh_2 (wh_1 was disabled)`, `deleted duplicate wh_3`. */
  actions: string[]
  /** The error, for `failed`. */
  error?: unknown
}

/** What `reconcile` found and did. */
export interface ReconcileReport {
  /** Accounts looked at. */
  checked: number
  /** Webhooks created. */
  created: number
  /** Webhooks deleted at the service. */
  deleted: number
  /** Accounts that need their owner to connect again: reported, not retried. */
  reauthorizationRequired: string[]
  /** Accounts with a subscription but no tokens (disconnected without `remove`). */
  notConnected: string[]
  /** Accounts another instance was working on: left to it. */
  busy: string[]
  /** Accounts whose check failed (the API or the store); tried again by the next run. */
  failed: string[]
  /**
   * Records made for another app (another `url` or `apiUrl` sharing the store): left alone.
   * Give each app and service its own prefix or schema.
   */
  otherApp: string[]
  /**
   * Set when the store could not list every account (a Redis Cluster's topology changed
   * under the scan, say): the accounts it missed were not checked. Run again.
   */
  incomplete?: unknown
  /** Every account, in the order finished. */
  accounts: ReconcileAccount[]
  /** Wall time, in ms. */
  ms: number
}

/** What one `sweep()` step did: the accounts it checked, as `reconcile` tells them, and more. */
export interface SweepReport extends ReconcileReport {
  /** Shards this instance stepped, and shards another instance held. */
  shards: number
  busyShards: number
  /** Accounts whose turn came in the step. */
  due: number
  /** Of those, healthy (a verified delivery within `healthyWithin`): not listed, but watched. */
  healthy: number
  /**
   * Accounts passed over as healthy earlier that received nothing since, by `healthyWithin`
   * after their last delivery: they stopped delivering, and were listed in this step.
   */
  stopped: number
  /** Accounts whose check failed at an earlier step of this instance, checked again. */
  retried: number
  /** How far behind now the furthest shard this step moved still is, in ms (0: caught up). */
  behindMs: number
}
