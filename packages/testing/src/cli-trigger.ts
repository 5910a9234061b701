import { EVENT_TYPES } from '@scheduling-kit/core'
import { serverText } from '@scheduling-kit/core/store'
import type { Values } from './cli-args.js'
import { fail, HELP, parse } from './cli-help.js'
import { createTestEvent } from './events.js'
import { sendTestEvent } from './sign.js'

// `scheduling-kit trigger`: a signed test event sent to a receiver straight, or through the fake
// service's control API (the service signs and delivers it, with its retries).

/** Why a request got no answer, in words: the system's code when there is one. */
function unreachable(url: string, error: unknown): string {
  let current: unknown = error
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') {
      const hint =
        code === 'ECONNREFUSED'
          ? ': nothing listens there (is it running, on that port?)'
          : code === 'ENOTFOUND'
            ? ': the host name does not resolve'
            : ''
      return `Could not reach ${url} (${code})${hint}.`
    }
    current = (current as { cause?: unknown }).cause
  }
  return `Could not reach ${url}: ${error instanceof Error ? error.message : String(error)}.`
}

export async function trigger(args: string[]): Promise<number> {
  const { values, positionals } = parse('trigger', args, {
    url: { type: 'string' },
    secret: { type: 'string' },
    'webhook-id': { type: 'string' },
    account: { type: 'string' },
    service: { type: 'string' },
    all: { type: 'boolean' },
  })
  if (values.help) {
    console.log(HELP.trigger)
    return 0
  }
  const [type, ...extra] = positionals
  if (values.all === true && type !== undefined)
    fail(`--all sends every type: drop "${type}".`, 'trigger')
  if (values.all !== true && !type) fail('Missing the event type (or --all).', 'trigger')
  if (extra.length > 0) fail(`Unexpected argument "${extra[0]}".`, 'trigger')
  const types = values.all === true ? [...EVENT_TYPES] : [type!]
  const send = values.service !== undefined ? triggerThroughService : triggerDirect
  if (values.service === undefined) {
    if (typeof values.url !== 'string' || !URL.canParse(values.url))
      fail("--url must be the receiver's absolute URL.", 'trigger')
    if (typeof values.secret !== 'string' || values.secret === '')
      fail('--secret is required.', 'trigger')
  }
  let failed = 0
  for (const one of types) {
    const code = await send(one, values)
    if (code !== 0) failed++
    // A receiver that is not there fails every type the same way: once is enough.
    if (code === 2) return 1
  }
  if (types.length > 1) console.log(`${types.length - failed} of ${types.length} answered 2xx`)
  return failed === 0 ? 0 : 1
}

/** One event, signed here, straight to the receiver. 2 when it could not be reached. */
async function triggerDirect(type: string, values: Values): Promise<number> {
  const url = values.url as string
  const event = createTestEvent(type)
  let answer: { status: number; body: string }
  try {
    answer = await sendTestEvent(url, event, {
      secret: values.secret as string,
      webhookId: values['webhook-id'] as string | undefined,
    })
  } catch (error) {
    console.error(unreachable(url, error))
    return 2
  }
  console.log(`${type} ${event.id} -> ${answer.status}`)
  if (answer.body) console.log(serverText(answer.body, 2000))
  return answer.status >= 200 && answer.status < 300 ? 0 : 1
}

/** `trigger --service`: the running fake service delivers the event to its webhooks. */
async function triggerThroughService(type: string, values: Values): Promise<number> {
  const service = values.service
  if (typeof service !== 'string' || !URL.canParse(service))
    fail("--service must be the fake service's URL.", 'trigger')
  let res: Response
  const control = new URL('/_control/trigger', service).toString()
  try {
    res = await fetch(control, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type, webhookId: values['webhook-id'], account: values.account }),
      redirect: 'manual',
    })
  } catch (error) {
    console.error(unreachable(control, error))
    return 2
  }
  if (!res.ok) {
    console.error(`${service} answered ${res.status}: ${serverText(await res.text(), 500)}`)
    return 1
  }
  const { event, deliveries } = (await res.json()) as {
    event: { id: string }
    deliveries: Array<{ webhookId: string; status?: number; error?: string; ok: boolean }>
  }
  console.log(`${type} ${serverText(String(event.id), 80)} -> ${deliveries.length} webhook(s)`)
  for (const d of deliveries)
    console.log(
      `  ${serverText(String(d.webhookId), 80)}: ${serverText(String(d.status ?? d.error), 500)}`,
    )
  return deliveries.length > 0 && deliveries.every((d) => d.ok) ? 0 : 1
}
