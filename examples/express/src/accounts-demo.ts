// The connected-accounts demo: three accounts connect, each gets its own webhook and its
// events; the service disables one webhook and reconcile repairs it; one secret is rotated
// while events arrive; one account disconnects and its webhook goes with it; the app is down
// longer than the service's retries and catchUp recovers what it missed; a late delivery is
// stale; a dead delivery is replayed from the delivery page. Exits 0 when every check came out
// as expected.
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  completeOAuthFlow,
  createTestEvent,
  sendTestEvent,
  startFakeSchedulingService,
} from '@scheduling-kit/testing'
import { createAccountsApp } from './accounts-app.js'
import { createChecks, explain } from './checks.js'

const { check, finish } = createChecks()

const service = await startFakeSchedulingService({ autoApprove: true, retrySchedule: [200] })
let server = createServer()
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
service.allowRedirectUri(`${appUrl}/auth/scheduling/callback`)
const adminToken = randomBytes(16).toString('hex')
const accounts = createAccountsApp({
  publicUrl: appUrl,
  clientId: service.clientId,
  clientSecret: service.clientSecret,
  authUrl: service.authUrl,
  apiUrl: service.apiUrl,
  cookieSecret: randomBytes(32).toString('base64url'),
  adminToken,
})
server.on('request', accounts.app)
const hookUrl = `${appUrl}/webhooks/scheduling`
const mine = (account: string) => service.webhooks(account).filter((w) => w.url === hookUrl)
const handledFor = (account: string) => accounts.events.filter((e) => e.account === account)

try {
  console.log(`Connected-accounts demo: fake service on ${service.url}, app on ${appUrl}\n`)

  // 1. Three accounts connect; each gets its own webhook, with its own secret.
  const cookies = new Map<string, string>()
  for (const account of ['acct_ana', 'acct_ben', 'acct_cy']) {
    const { cookie } = await completeOAuthFlow(`${appUrl}/auth/scheduling/login`, { account })
    cookies.set(account, cookie)
  }
  const hooks = ['acct_ana', 'acct_ben', 'acct_cy'].map((a) => mine(a))
  check('accounts connected, one webhook each', '1 1 1', hooks.map((h) => h.length).join(' '))
  check('three secrets, all different', 3, new Set(hooks.map((h) => h[0]?.secret)).size)
  const connection = async (account: string) =>
    (await (
      await fetch(`${appUrl}/api/connection`, { headers: { cookie: cookies.get(account)! } })
    ).json()) as { state: string; accountId?: string; webhook?: { state: string; id?: string } }
  const ana = await connection('acct_ana')
  check(
    "ana's connection (GET /api/connection)",
    `connected acct_ana active ${mine('acct_ana')[0]?.id}`,
    `${ana.state} ${ana.accountId} ${ana.webhook?.state} ${ana.webhook?.id}`,
  )

  // 2. Each account's event reaches the app signed with its webhook's secret, attributed to it.
  for (const account of ['acct_ana', 'acct_ben', 'acct_cy'])
    await service.trigger('event.created', { account })
  check(
    'events attributed to their account (context.account)',
    'acct_ana acct_ben acct_cy',
    accounts.events.map((e) => e.account).join(' '),
  )

  // 3. The service disables ben's webhook: nothing reaches the app until reconcile repairs it.
  explain(
    "The service disables acct_ben's webhook (as after failed deliveries); reconcile repairs it.",
  )
  const disabled = mine('acct_ben')[0]!.id
  service.setWebhookState(disabled, 'disabled')
  const lost = await service.trigger('event.created', { account: 'acct_ben' })
  check('deliveries to a disabled webhook', 0, lost.deliveries.length)
  const report = await accounts.subscriptions.reconcile()
  console.log(
    `  reconcile: ${report.accounts.map((a) => `${a.key} ${a.outcome}${a.actions.length ? ` (${a.actions.join('; ')})` : ''}`).join(', ')}`,
  )
  check(
    'reconcile: accounts checked, webhooks created',
    '3 1',
    `${report.checked} ${report.created}`,
  )
  const after = await service.trigger('event.created', { account: 'acct_ben' })
  check('ben delivered again after the repair', 200, after.deliveries[0]?.status)
  check(
    'ben has one webhook, a new one',
    'true',
    mine('acct_ben').length === 1 && mine('acct_ben')[0]!.id !== disabled,
  )

  // 4. cy's secret is rotated while an event arrives: both webhooks get it, handled once.
  explain(
    "acct_cy's secret is rotated: a new webhook first, both accepted, then the old one deleted.",
    'An event sent while both exist reaches both (one payload id): its handlers run once.',
  )
  const before = mine('acct_cy')[0]!.id
  // A slow delete of the old webhook: room for an event while both exist, on a busy machine too.
  service.failApi({ status: 200, method: 'DELETE', delayMs: 2_000, landed: true })
  const rotating = accounts.subscriptions.rotate('acct_cy')
  let settled = false
  const done = () => {
    settled = true
  }
  rotating.then(done, done)
  while (mine('acct_cy').length < 2 && !settled) await new Promise((r) => setTimeout(r, 5))
  const during = await service.trigger('event.rescheduled', { account: 'acct_cy' })
  const rotated = await rotating
  check(
    'deliveries while both webhooks exist',
    '200 200',
    during.deliveries.map((d) => d.status).join(' '),
  )
  check(
    'handlers run for that payload id',
    1,
    handledFor('acct_cy').filter((e) => e.id === during.event.id).length,
  )
  check(
    'old webhook deleted, new one kept',
    `${rotated.webhookId}`,
    mine('acct_cy')
      .map((w) => w.id)
      .join(' '),
  )
  check('retired webhook was the old one', before, rotated.retired.join(' '))

  // 5. ana disconnects: the webhook is deleted before the tokens; a late delivery runs nothing.
  explain(
    'acct_ana disconnects: its webhook is deleted while its token still works, then its tokens.',
    "A delivery already on its way, signed with the old webhook's secret, is answered 200",
    'without running handlers (for the grace period), so the service does not retry it.',
  )
  const gone = mine('acct_ana')[0]!
  const bye = await fetch(`${appUrl}/auth/scheduling/disconnect`, {
    method: 'POST',
    headers: { cookie: cookies.get('acct_ana')!, origin: appUrl, accept: 'application/json' },
  })
  check('disconnect answered', 200, bye.status)
  check("ana's webhooks at the service", 0, mine('acct_ana').length)
  check(
    "ana's tokens",
    'gone',
    (await accounts.tokenStore.get('acct_ana')) === undefined ? 'gone' : 'kept',
  )
  const handledBefore = handledFor('acct_ana').length
  const late = await sendTestEvent(hookUrl, createTestEvent('event.canceled'), {
    secret: gone.secret,
    webhookId: gone.id,
  })
  check(
    'late delivery answered',
    `200 ${JSON.stringify({ received: true, removed: true })}`,
    `${late.status} ${late.body}`,
  )
  check('handlers run for it', 0, handledFor('acct_ana').length - handledBefore)
  check("ana's connection after it", 'disconnected', (await connection('acct_ana')).state)
  check(
    'connection changes told (onConnectionChange)',
    'connected acct_ana, connected acct_ben, connected acct_cy, webhook_repaired acct_ben, disconnected acct_ana',
    accounts.changes.map((c) => `${c.type} ${c.key}`).join(', '),
  )

  // 6. The app is down longer than the service's whole retry schedule: catch-up recovers it.
  explain(
    'The app is down while ben books and cancels, and cy books: the service tries each delivery',
    'twice and gives up. Back up, the app runs catchUp(): each Event listed from the API whose',
    'state the ledger has not applied runs the handlers once, attributed to its account; the',
    "booking lost while ben's webhook was disabled (step 3) comes back with them.",
  )
  const port = (server.address() as AddressInfo).port
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  const booked = { id: 'event_outage_ben' }
  const created = await service.trigger('event.created', { account: 'acct_ben', payload: booked })
  await service.trigger('event.canceled', { account: 'acct_ben', payload: booked })
  await service.trigger('event.created', { account: 'acct_cy', payload: { id: 'event_outage_cy' } })
  await service.idle()
  const missed = service.deliveries().filter((d) => d.at >= created.deliveries[0]!.at)
  check('deliveries during the outage that reached the app', 0, missed.filter((d) => d.ok).length)
  server = createServer(accounts.app)
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const caught = await accounts.webhooks.catchUp()
  console.log(
    `  catchUp: ${caught.accounts} accounts, ${caught.listed} Events listed, ${caught.fed} fed, ${caught.ran} run; not recoverable: ${caught.unrecoverable.join(', ')}`,
  )
  const recovered = accounts.events.filter((e) => e.how === 'caught up')
  // Ben's booking sent while his webhook was disabled (step 3) is recovered too.
  check(
    'recovered by catchUp (account, type, state)',
    'acct_ben event.canceled canceled, acct_ben event.created confirmed, acct_cy event.created confirmed',
    recovered
      .map((e) => `${e.account} ${e.type} ${e.state}`)
      .sort()
      .join(', '),
  )
  check(
    "the booking lost while ben's webhook was disabled, among them",
    'yes',
    recovered.some((e) => e.type === 'event.created' && e.account === 'acct_ben') ? 'yes' : 'no',
  )
  check('a second catchUp finds nothing to run', 0, (await accounts.webhooks.catchUp()).fed)

  // 7. The service's late retry of the booking arrives after the cancellation: it is stale.
  explain(
    "A late copy of ben's booking (older than the cancellation applied) arrives: answered 200,",
    'recorded stale, and no handler runs: the Event stays canceled.',
  )
  const benHook = mine('acct_ben')[0]!
  const stale = await sendTestEvent(hookUrl, created.event, {
    secret: benHook.secret,
    webhookId: benHook.id,
  })
  check(
    'late booking answered',
    `200 ${JSON.stringify({ received: true, stale: true })}`,
    `${stale.status} ${stale.body}`,
  )
  check(
    "ben's Event as the app applied it last",
    'canceled',
    accounts.events.filter((e) => e.account === 'acct_ben' && e.state !== undefined).at(-1)?.state,
  )

  // 8. A delivery whose handlers fail on every attempt is dead; replayed from the page.
  explain(
    "The bookings database is down while cy's event arrives: both of the service's attempts",
    'fail and the delivery is dead in the ledger. Fixed, it is replayed from the delivery page.',
  )
  accounts.faults.failing = true
  const failing = await service.trigger('event.rescheduled', { account: 'acct_cy' })
  await service.idle()
  accounts.faults.failing = false
  const deadId = `account:7:acct_cy:${failing.event.id}`
  check(
    'the delivery in the ledger',
    'dead 2',
    `${(await accounts.ledger.get(deadId))?.status} ${(await accounts.ledger.get(deadId))?.attempts}`,
  )
  const admin = { cookie: `admin=${adminToken}` }
  const pageUrl = `${appUrl}/admin/deliveries`
  const listed = await fetch(`${pageUrl}?status=dead`, {
    headers: { ...admin, accept: 'application/json' },
  })
  const token = listed.headers.get('set-cookie')!.split(';', 1)[0]!
  const { entries } = (await listed.json()) as { entries: { id: string }[] }
  check('the page lists it as dead', deadId, entries.map((e) => e.id).join(' '))
  const replayed = await fetch(pageUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: `${admin.cookie}; ${token}`,
    },
    body: new URLSearchParams({ replay: deadId, csrf: token.split('=')[1]! }).toString(),
  })
  check('replay from the page answered', 303, replayed.status)
  check(
    'the delivery after the replay',
    'done replayed',
    `${(await accounts.ledger.get(deadId))?.status} ${accounts.events.at(-1)?.how}`,
  )
  check('the page without the admin cookie', 403, (await fetch(pageUrl)).status)

  console.log('\nEvents by account:')
  for (const account of ['acct_ana', 'acct_ben', 'acct_cy'])
    console.log(
      `  ${account}: ${handledFor(account)
        .map((e) => e.type)
        .join(', ')}`,
    )
} finally {
  await accounts.tokens.close()
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await service.close()
}

finish()
