// The app's own use of the events: a table of bookings, written by the webhook route's
// handlers, read by the page.
import { database, schema } from './scheduling'

const table = () => `"${schema()}".bookings`

/** Makes the app's table (`pnpm migrate`, beside the toolkit's `migrate`). */
export async function migrateBookings(): Promise<void> {
  await (await database()).query(
    `CREATE TABLE IF NOT EXISTS ${table()} (
       payload_id text PRIMARY KEY, account text NOT NULL, type text NOT NULL,
       event_id text, start_at text, received_at timestamptz NOT NULL DEFAULT now())`,
  )
}

export interface Booking {
  payloadId: string
  account: string
  type: string
  eventId: string | undefined
  startAt: string | undefined
}

/** Records one delivery's event; a retry of the same payload changes nothing. */
export async function recordBooking(booking: Booking): Promise<void> {
  await (await database()).query(
    `INSERT INTO ${table()} (payload_id, account, type, event_id, start_at)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (payload_id) DO NOTHING`,
    [
      booking.payloadId,
      booking.account,
      booking.type,
      booking.eventId ?? null,
      booking.startAt ?? null,
    ],
  )
}

/** The bookings of one account, newest first. */
export async function bookingsOf(account: string): Promise<Booking[]> {
  const { rows } = await (await database()).query(
    `SELECT payload_id, account, type, event_id, start_at FROM ${table()}
     WHERE account = $1 ORDER BY received_at DESC LIMIT 50`,
    [account],
  )
  return rows.map((row) => ({
    payloadId: row.payload_id,
    account: row.account,
    type: row.type,
    eventId: row.event_id ?? undefined,
    startAt: row.start_at ?? undefined,
  }))
}
