import type { ApiEvent } from '../api/events.js'
import type { LedgerEnvelope } from '../claims/record.js'
import { shapeOf } from '../ledger/digest.js'
import type { ResourceMark } from '../ledger/entry.js'

// What catch-up feeds for a listed Event, planned without I/O: nothing when the whole Event's
// digest matches what the ledger last applied to it for that account, else a synthetic
// delivery of the Event as listed, typed by what differs and stamped with its listing's time.

/** The webhook types no list endpoint can recover: their changes are lost with their deliveries. */
export const UNRECOVERABLE = ['poll.*', 'workflow.*'] as const

/** What an Event's state is told as, when the ledger has not applied it. */
const TYPE_OF_STATE: Readonly<Record<string, string>> = {
  confirmed: 'event.created',
  awaiting_approval: 'event.requested',
  declined: 'event.declined',
  canceled: 'event.canceled',
  awaiting_checkout: 'event.checkout.pending',
  checkout_expired: 'event.checkout.expired',
}

/** A hash of the text, hex: the synthetic payload id, the same for the same difference. */
async function digest(text: string): Promise<string> {
  const bytes = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(bytes).slice(0, 16)]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('')
}

/**
 * The type a difference is told as: a state not applied says what it is (`event.canceled`,
 * `event.declined`, ...; a first sight of a confirmed Event is `event.created`); with the state
 * unchanged, new times are `event.rescheduled`; anything else (attendees and their responses,
 * a description, fields unknown today) is `event.changed`. Every one carries the whole Event
 * as listed now.
 */
export function differenceType(
  listed: { state: string; when?: string },
  applied: ResourceMark | undefined,
): string {
  if (applied === undefined) return TYPE_OF_STATE[listed.state] ?? 'event.changed'
  if (applied.state !== listed.state)
    return listed.state === 'confirmed'
      ? 'event.changed'
      : (TYPE_OF_STATE[listed.state] ?? 'event.changed')
  return applied.when !== undefined && listed.when !== applied.when
    ? 'event.rescheduled'
    : 'event.changed'
}

/**
 * The synthetic delivery of a listed Event that differs from what the ledger last applied to
 * it (its digest: the whole resource, not its state alone); `undefined` when it does not (or
 * the Event has no id). Stamped with its listing's time. Its payload id is
 * derived from the key, the Event, its digest and the delivery last applied: the same
 * difference found twice is one delivery (a duplicate).
 */
export async function catchUpEnvelope(
  event: ApiEvent,
  applied: ResourceMark | undefined,
  key: string | undefined,
  listedAt: number,
  volatile?: ReadonlySet<string>,
): Promise<LedgerEnvelope | undefined> {
  if (typeof event.id !== 'string' || event.id === '') return undefined
  const shape = shapeOf(event as Record<string, unknown>, volatile)
  if (applied?.digest === shape.digest) return undefined
  const state = typeof event.state === 'string' ? event.state : ''
  const type = differenceType(
    { state, ...(shape.when === undefined ? {} : { when: shape.when }) },
    applied,
  )
  const id = `payload_catchup_${await digest(JSON.stringify([key ?? '', event.id, shape.digest, applied?.by ?? '']))}`
  return {
    id,
    type,
    occurred_at: new Date(listedAt).toISOString(),
    payload: event,
  }
}
