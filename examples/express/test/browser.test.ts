import { existsSync, mkdirSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createTestEvent, sendTestEvent } from '@scheduling-kit/testing'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack } from '../src/stack.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const OUTPUT = new URL('../test-output/browser/', import.meta.url).pathname

let stack: Awaited<ReturnType<typeof startStack>>
let browser: Browser
beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `No Chromium at ${CHROMIUM}: run "bash scripts/ensure-chromium.sh" (Debian: apt-get install -y chromium), or set CHROMIUM_PATH.`,
    )
  }
  stack = await startStack({ retrySchedule: [300] })
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  })
})
afterAll(async () => {
  await browser?.close()
  await stack?.close()
})

async function shot(page: Page, name: string) {
  mkdirSync(OUTPUT, { recursive: true })
  await page.screenshot({ path: `${OUTPUT}${name}.png`, fullPage: true })
}

/** The dashboard row of the app's webhook. */
const webhookRow = () => `#webhooks tr[data-webhook="${stack.webhookId}"]`

describe('the example app and the fake service in a real browser', () => {
  it('consent page names the app and where the user will be sent; the account shows; events arrive live; the dashboard’s buttons work; disconnect', async () => {
    const context = await browser.newContext()
    const app = await context.newPage()
    await app.goto(stack.appUrl)
    await app.click('#connect')

    // The consent page: who asks, and where the browser goes next.
    await app.waitForSelector('#allow')
    expect(new URL(app.url()).origin).toBe(stack.service.url)
    expect(await app.textContent('#consent-title')).toBe(
      'Bookings (example app) wants to connect to your scheduling account',
    )
    expect(await app.textContent('#consent-origin')).toBe(new URL(stack.appUrl).host)
    expect(await app.textContent('#consent-redirect')).toBe(
      `${stack.appUrl}/auth/scheduling/callback`,
    )
    await shot(app, 'consent')
    await app.fill('#consent-account', 'acct_browser')
    await app.click('#allow')
    await app.waitForSelector('#account')
    expect(new URL(app.url()).origin).toBe(stack.appUrl)
    expect(await app.textContent('#account')).toContain('User acct_browser')
    await app.waitForSelector('#live.live')

    // The dashboard, in another tab: send one event type to the app's webhook.
    const dashboard = await context.newPage()
    await dashboard.goto(stack.service.url)
    expect(await dashboard.textContent(webhookRow())).toContain(
      `${stack.appUrl}/webhooks/scheduling`,
    )
    // The app's page must not reload: a mark on its window survives only without one.
    await app.evaluate(() => {
      ;(window as unknown as { mark: number }).mark = 42
    })
    await dashboard.selectOption(`${webhookRow()} select`, 'event.rescheduled')
    await Promise.all([dashboard.waitForEvent('load'), dashboard.click(`${webhookRow()} .send`)])
    expect(await dashboard.textContent('#notice')).toMatch(/Sent event\.rescheduled .* 200/)
    const row = app.locator('#events tr', { hasText: 'event.rescheduled' })
    await row.waitFor()
    expect(await row.textContent()).toContain('Grace Hopper')
    expect(await row.textContent()).toContain('confirmed')
    expect(await app.evaluate(() => (window as unknown as { mark?: number }).mark)).toBe(42)
    await shot(app, 'live-event')

    // A delivery the app fails: the dashboard shows the 500, the retry due, then the 200.
    stack.faults.failNextDeliveries = 1
    await dashboard.selectOption(`${webhookRow()} select`, 'event.canceled')
    await Promise.all([dashboard.waitForEvent('load'), dashboard.click(`${webhookRow()} .send`)])
    const failed = dashboard.locator('#deliveries tr.delivery', { hasText: 'event.canceled' })
    expect(await failed.first().locator('.status').textContent()).toBe('500')
    expect(await failed.first().textContent()).toMatch(/retry at/)
    await stack.service.idle()
    await dashboard.reload()
    expect(await failed.allTextContents()).toHaveLength(2)
    expect(await failed.first().locator('.status').textContent()).toBe('200')
    await app.locator('#events tr', { hasText: 'event.canceled' }).waitFor()
    await shot(dashboard, 'dashboard')

    // Expire the access token: the app's next API call refreshes it, once.
    const account = `#accounts tr[data-account="acct_browser"]`
    expect(await dashboard.textContent(`${account} .live`)).toBe('1')
    await Promise.all([dashboard.waitForEvent('load'), dashboard.click(`${account} .expire`)])
    expect(await dashboard.textContent(`${account} .live`)).toBe('0')
    const refreshes = stack.service.auth.counters.refresh
    const me = await app.evaluate(async () => (await fetch('/api/me')).status)
    expect(me).toBe(200)
    expect(stack.service.auth.counters.refresh).toBe(refreshes + 1)
    await dashboard.reload()
    expect(await dashboard.textContent(`${account} .live`)).toBe('1')

    // Revoke the grant: the app can no longer call the API for this account.
    await Promise.all([dashboard.waitForEvent('load'), dashboard.click(`${account} .revoke`)])
    expect(await dashboard.textContent(`${account} .grants`)).toBe('0 active, 1 revoked')
    expect(await app.evaluate(async () => (await fetch('/api/me')).status)).not.toBe(200)

    // Disconnect from the app's page.
    await app.reload()
    await Promise.all([app.waitForURL(`${stack.appUrl}/`), app.click('#disconnect')])
    await app.waitForSelector('#connect')
    expect(await stack.example.store.get('acct_browser')).toBeUndefined()
    await context.close()
  })

  it('authorize errors name the bad parameter', async () => {
    const page = await browser.newPage()
    const authorize = new URL('/oauth/authorize', stack.service.url)
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: 'nobody',
      redirect_uri: `${stack.appUrl}/auth/scheduling/callback`,
      state: 's',
    }).toString()
    const unknown = await page.goto(authorize.toString())
    expect(unknown?.status()).toBe(400)
    expect(await page.textContent('#authorize-error')).toContain('Unknown client_id "nobody"')
    authorize.searchParams.set('client_id', stack.service.clientId)
    authorize.searchParams.set('redirect_uri', 'https://evil.example/callback')
    await page.goto(authorize.toString())
    expect(await page.textContent('#authorize-error')).toContain(
      'redirect_uri "https://evil.example/callback" is not registered',
    )
    await page.close()
  })

  it('a sign-in started on localhost lands on 127.0.0.1 without its cookie: the page says why', async () => {
    const page = await browser.newPage()
    await page.goto(stack.appUrl.replace('127.0.0.1', 'localhost'))
    await page.click('#connect')
    await page.waitForSelector('#allow')
    await page.click('#allow')
    await page.waitForSelector('#cause')
    expect(new URL(page.url()).host).toBe(new URL(stack.appUrl).host)
    expect(await page.textContent('#cause')).toContain(
      `Open the app at ${stack.appUrl} and connect from there`,
    )
    await shot(page, 'missing-cookie')
    await page.close()
  })

  it('the delivery page: refused without the admin cookie; a delivery that failed twice is dead there, and its Replay button runs it', async () => {
    const refused = await browser.newPage()
    const answer = await refused.goto(`${stack.appUrl}/admin/deliveries`)
    expect(answer?.status()).toBe(403)
    expect(await refused.textContent('#refused')).toBe('Not allowed.')
    await refused.close()

    // A delivery whose handler fails on both of the service's attempts: dead in the ledger.
    stack.faults.failNextDeliveries = 2
    const { event } = await stack.service.trigger('event.canceled', {
      payload: { description: '<script>alert(1)</script>' },
    })
    await stack.service.idle()
    const context = await browser.newContext()
    await context.addCookies([
      { name: 'example_admin', value: stack.adminToken, url: stack.appUrl },
    ])
    const page = await context.newPage()
    await page.goto(`${stack.appUrl}/admin/deliveries?status=dead`)
    const row = page.locator(`#deliveries tr[data-id="${event.id}"]`)
    expect(await row.locator('.status').textContent()).toBe('dead')
    expect(await row.locator('.attempts').textContent()).toBe('2')
    expect(await row.locator('.error').textContent()).toContain('simulated outage')
    await shot(page, 'deliveries-dead')

    // Another origin (another port of this host: the same site, so the SameSite cookie goes
    // along) posting the replay form, even with the page's real token: the browser says where
    // the form came from, and the page refuses it.
    const token = (await context.cookies(stack.appUrl)).find((c) => c.name === 'sk_ledger_csrf')!
    const foreign = createServer((_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<form id="f" method="post" action="${stack.appUrl}/admin/deliveries"><input name="csrf" value="${token.value}"><input name="replay" value="${event.id}"></form><script>document.getElementById('f').submit()</script>`,
        )
    })
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve))
    const forgery = await context.newPage()
    const [foreignPost] = await Promise.all([
      forgery.waitForResponse((r) => r.url().startsWith(`${stack.appUrl}/admin/deliveries`)),
      forgery.goto(`http://127.0.0.1:${(foreign.address() as AddressInfo).port}/`),
    ])
    expect(foreignPost.status()).toBe(403)
    expect((await stack.example.ledger.get(event.id))?.status).toBe('dead')
    await forgery.close()
    foreign.close()

    await Promise.all([page.waitForURL(/notice=/), row.locator('button.replay').click()])
    expect(await page.textContent('#notice')).toBe(
      'Replayed the delivery: its handlers ran and finished.',
    )
    await page.goto(`${stack.appUrl}/admin/deliveries`)
    expect(await page.locator(`#deliveries tr[data-id="${event.id}"] .status`).textContent()).toBe(
      'done',
    )
    expect((await stack.example.ledger.get(event.id))?.source).toBe('replay')
    await shot(page, 'deliveries-replayed')

    // What the page shows besides handled deliveries: a forged request (refused, never
    // recorded), a duplicate (the service's redeliver of a handled one), and a late copy of an
    // Event's booking after its cancellation (stale).
    const hook = stack.service.webhooks().find((w) => w.id === stack.webhookId)!
    const hookUrl = `${stack.appUrl}/webhooks/scheduling`
    const forged = await sendTestEvent(hookUrl, createTestEvent('event.created'), {
      secret: 'not-the-secret',
      webhookId: hook.id,
    })
    expect(forged.status).toBe(401)
    const payload = { id: `event_late_${Date.now()}` }
    const created = await stack.service.trigger('event.created', { payload })
    await stack.service.trigger('event.canceled', { payload })
    await stack.service.idle()
    // Another delivery of the booking, as old as the first: older than the cancellation applied.
    const copy = createTestEvent('event.created', {
      occurred_at: created.event.occurred_at,
      payload: created.event.payload as Record<string, unknown>,
    })
    const late = await sendTestEvent(hookUrl, copy, { secret: hook.secret, webhookId: hook.id })
    expect(late.body).toContain('"stale":true')
    const done = stack.service.deliveries().find((d) => d.payloadId === created.event.id && d.ok)!
    await stack.service.redeliver(done.deliveryId)
    await page.goto(`${stack.appUrl}/admin/deliveries`)
    const recent = page.locator('#recent')
    expect(await recent.locator('tr.recent-refused').first().textContent()).toContain('401')
    expect(await recent.locator('tr.recent-duplicate').first().textContent()).toContain(
      created.event.id,
    )
    await page.goto(`${stack.appUrl}/admin/deliveries?status=stale`)
    expect(await page.locator(`#deliveries tr[data-id="${copy.id}"] .status`).textContent()).toBe(
      'stale',
    )
    await shot(page, 'deliveries-stale')
    await context.close()
  })
})
