import type { CatchUpOptions, CatchUpReport } from '../catch-up/options.js'
import { serverText, WebhookError } from '../errors/errors.js'
import type { Received } from './receive.js'
import type { Settings } from './settings.js'

// Old bodies. The service signs no timestamp: past the horizon within which the record still
// knows a delivery (the dedupe window, the ledger's retention), a captured body sent again
// looks like a first delivery. The signed `occurred_at` is the one time a sender cannot change:
// a body older than the horizon (option `maxAgeMs`) does not run. With a ledger, its account's
// Events are read again from the API (`DeliveryLedger.reread`) and what differs from what the
// ledger applied runs the way catch-up runs it: the current state, not the old body's. The
// delivery is answered 200 `too_old` (no retry mends it) and told to `onError`, which the
// ledger records.

/** The ms since `occurred_at` when it is past `maxAgeMs`; `undefined` when it is not (or none). */
export function ageOf(
  event: { occurred_at?: unknown },
  maxAgeMs: number,
  now = Date.now(),
): number | undefined {
  const at = typeof event.occurred_at === 'string' ? Date.parse(event.occurred_at) : Number.NaN
  const age = now - at
  return age > maxAgeMs ? age : undefined
}

/** Refuses `received`, `age` ms old: its account's Events read again first when the ledger can. */
export async function refuseOld(
  { event, context }: Received,
  age: number,
  settings: Settings,
  catchUp: (options: CatchUpOptions) => Promise<CatchUpReport>,
): Promise<never> {
  const account = context.account
  const ran =
    account !== undefined && event.type.startsWith('event.')
      ? await settings.ledger?.reread(account, catchUp)
      : undefined
  throw tooOld(event, age, ran)
}

/** `too_old` (answered 200): `event` is `age` ms old; `ran` differences run when it was read again. */
export function tooOld(event: { id: string }, age: number, ran?: number): WebhookError {
  return new WebhookError(
    'too_old',
    `${serverText(event.id, 64)} occurred ${Math.floor(age / 864e5)} days ago, past maxAgeMs: not run${ran === undefined ? '' : `; its account's Events read again, ${ran} difference(s) run`}. catchUp() applies what changed.`,
  )
}
