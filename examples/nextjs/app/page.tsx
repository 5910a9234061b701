// The home page: which account this browser connected, and its bookings.

import { createOAuthRoutes } from '@scheduling-kit/core/oauth'
import { headers } from 'next/headers'
import { bookingsOf } from '@/lib/bookings'
import { scheduling } from '@/lib/scheduling'

const oauth = createOAuthRoutes<Request>(scheduling)

export const dynamic = 'force-dynamic'

export default async function Home() {
  const key = await oauth.connectedKey(await headers())
  if (key === undefined)
    return (
      <main>
        <a href="/auth/scheduling/login">Connect your scheduling account</a>
      </main>
    )
  const bookings = await bookingsOf(key)
  return (
    <main>
      <p>
        Connected: <span id="account">{key}</span>
      </p>
      <ul id="bookings">
        {bookings.map((b) => (
          <li key={b.payloadId}>
            {b.type} {b.eventId} {b.startAt}
          </li>
        ))}
      </ul>
      <form method="post" action="/auth/scheduling/disconnect">
        <button type="submit">Disconnect</button>
      </form>
    </main>
  )
}
