import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectAccount, startStack } from '../src/stack.js'

let stack: Awaited<ReturnType<typeof startStack>>
beforeAll(async () => {
  stack = await startStack({ retrySchedule: [100] })
})
afterAll(() => stack.close())

describe('example: Express app with scheduling-kit', () => {
  it('keeps its own routes and JSON parser working', async () => {
    const res = await fetch(`${stack.appUrl}/api/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"text":"hello"}',
    })
    expect(res.status).toBe(201)
    expect(await res.json()).toEqual({ note: { text: 'hello' } })
    expect((await fetch(`${stack.appUrl}/nope`)).status).toBe(404)
  })

  it('connects an account through the consent page, stores its tokens in its file store, shows it', async () => {
    const page = await (await fetch(stack.appUrl)).text()
    expect(page).toContain('id="connect"')
    const cookie = await connectAccount(stack.appUrl, 'acct_example')
    const record = await stack.example.store.get('acct_example')
    expect(record?.refreshToken).toMatch(/^rt_/)
    expect(await (await fetch(stack.appUrl, { headers: { cookie } })).text()).toContain(
      'User acct_example',
    )
    expect(
      await (await fetch(`${stack.appUrl}/api/me`, { headers: { cookie } })).json(),
    ).toMatchObject({ id: 'acct_example' })
  })

  it('lists events the service sends, and the retry after a failure is handled once', async () => {
    const { event } = await stack.service.trigger('event.approved')
    expect(await (await fetch(stack.appUrl)).text()).toContain(event.id)
    stack.faults.failNextDeliveries = 1
    const failing = await stack.service.trigger('event.declined')
    expect(failing.deliveries[0]?.status).toBe(500)
    await stack.service.idle()
    const events = (await (await fetch(`${stack.appUrl}/api/events`)).json()) as Array<{
      id: string
    }>
    expect(events.filter((e) => e.id === failing.event.id)).toHaveLength(1)
  })

  it('refreshes once when the service expired the token early, for many calls at once', async () => {
    const cookie = await connectAccount(stack.appUrl, 'acct_refresh')
    stack.service.expireToken('acct_refresh')
    const before = stack.service.auth.counters.refresh
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => fetch(`${stack.appUrl}/api/me`, { headers: { cookie } })),
    )
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200))
    expect(stack.service.auth.counters.refresh - before).toBe(1)
  })

  it('disconnects: the tokens are deleted from the store', async () => {
    const cookie = await connectAccount(stack.appUrl, 'acct_bye')
    const res = await fetch(`${stack.appUrl}/auth/scheduling/disconnect`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: stack.appUrl },
    })
    expect(res.status).toBe(303)
    expect(await stack.example.store.get('acct_bye')).toBeUndefined()
  })
})
