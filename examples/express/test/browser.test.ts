import { existsSync, mkdirSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'
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
  stack = await startStack()
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

describe('example in a real browser', () => {
  it('connects through the consent page, shows the account, lists an event triggered on the service', async () => {
    const page = await browser.newPage()
    await page.goto(stack.appUrl)
    await page.click('#connect')
    // The fake service's consent page.
    await page.waitForSelector('#allow')
    expect(new URL(page.url()).origin).toBe(stack.service.url)
    await page.click('#allow')
    await page.waitForSelector('#account')
    expect(new URL(page.url()).origin).toBe(stack.appUrl)
    expect(await page.textContent('#account')).toContain('User acct_1')

    // Trigger an event from the service's dashboard, then see it on the app's page.
    await page.goto(stack.service.url)
    await page.selectOption('#event-type', 'event.rescheduled')
    await Promise.all([page.waitForURL(`${stack.service.url}/`), page.click('#trigger')])
    await stack.service.idle()
    await page.goto(stack.appUrl)
    expect(await page.textContent('#events')).toContain('event.rescheduled')
    mkdirSync(OUTPUT, { recursive: true })
    await page.screenshot({ path: `${OUTPUT}connected.png`, fullPage: true })
  })
})
