import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AuthService, WebhookApi } from '@scheduling-kit/fake-auth'
import { dashboardPage } from './dashboard.js'
import type { Deliveries } from './service-deliveries.js'
import { isOwnHost, json, Refused, readJson } from './service-http.js'
import type { Webhook } from './service-types.js'

// The fake service's control API (`/_control/...`) and its dashboard (`/`): for tests, the CLI
// and people, on this machine only.

/** What the control routes drive. `address` is where the service listens, once it does. */
export interface ControlContext {
  auth: AuthService
  registry: WebhookApi
  deliveries: Deliveries
  address: { host: string; port: number }
  /** After a dashboard button, the notice its next load shows. */
  notice?: string
}

export function registerWebhook(
  registry: WebhookApi,
  input: {
    url: string
    secret?: string
    events?: string[]
    id?: string
    account?: string
  },
): Webhook {
  if (typeof input?.url !== 'string' || !URL.canParse(input.url))
    throw new Error('registerWebhook: url must be an absolute URL')
  const protocol = new URL(input.url).protocol
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new Error('registerWebhook: url must be an http: or https: URL')
  // A webhook is never replaced: its URL and secret stay what they were when it was made.
  if (input.id !== undefined && registry.get(input.id) !== undefined)
    throw new Refused(409, `registerWebhook: a webhook ${input.id} exists already`)
  return registry.create(input)
}

/** The answer; after a dashboard button (`redirect` set), the notice its next load shows. */
function done(
  context: ControlContext,
  res: ServerResponse,
  form: boolean,
  status: number,
  body: unknown,
  said: string,
) {
  if (form) context.notice = said
  return json(res, status, body)
}

/**
 * The control API and the dashboard answer only requests that are this machine's own: a
 * `Host` that names the service (not a rebound DNS name), no `Origin` but the service's, and
 * no cross-site fetch metadata.
 */
export function checkOwnRequest(address: ControlContext['address'], req: IncomingMessage): void {
  const host = req.headers.host
  if (!isOwnHost(host, address.host, address.port)) {
    throw new Refused(
      403,
      `The fake service answers its control API only at its own address (http://${address.host}:${address.port}), not at the Host this request named.`,
    )
  }
  const origin = req.headers.origin
  if (origin !== undefined && origin !== `http://${host}`) {
    throw new Refused(403, 'The control API is not for other sites: this request came from one.')
  }
  const site = req.headers['sec-fetch-site']
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw new Refused(403, 'The control API is not for other sites: this request came from one.')
  }
}

/** One control request: its body read, what a route needs to answer it. */
interface ControlCall {
  context: ControlContext
  res: ServerResponse
  body: Record<string, unknown>
  /** A string field of the body, or `undefined`. */
  str(key: string): string | undefined
  /** From a dashboard button: the answer leaves a notice for the page's next load. */
  form: boolean
}

type Route = (call: ControlCall) => unknown

const ok = ({ res }: ControlCall) => json(res, 200, { ok: true })

function overview({ context, res }: ControlCall) {
  const { auth, registry, deliveries } = context
  return json(res, 200, {
    webhooks: registry.all().map(({ secret, ...w }) => w),
    deliveries: deliveries.log.length,
    counters: auth.counters,
    accounts: auth.accounts(),
  })
}

function addWebhook({ context, res, body, str }: ControlCall) {
  return json(
    res,
    201,
    registerWebhook(context.registry, {
      url: str('url')!,
      secret: str('secret'),
      events: body.events as string[] | undefined,
      id: str('id'),
      account: str('account'),
    }),
  )
}

function setWebhookState({ context, res, str, form }: ControlCall) {
  const webhookId = str('id') ?? ''
  const state = str('state') ?? 'disabled'
  if (state !== 'active' && state !== 'disabled' && state !== 'deleted')
    return json(res, 400, { error: 'state is active, disabled or deleted' })
  if (!context.registry.setState(webhookId, state))
    return json(res, 404, { error: `no webhook ${webhookId}` })
  const said = `Webhook ${webhookId} is ${state}.`
  return done(context, res, form, 200, { id: webhookId, state }, said)
}

function failApi(call: ControlCall) {
  const { context, res, body, str } = call
  const status = Number(body.status ?? 500)
  if (!Number.isInteger(status) || status < 400 || status > 599)
    return json(res, 400, { error: 'status must be a 4xx or 5xx code' })
  context.registry.failApi({
    status,
    count: Number(body.count ?? 1),
    retryAfter: str('retryAfter'),
    method: str('method'),
    landed: body.landed === true,
  })
  return ok(call)
}

function clearFailures(call: ControlCall) {
  call.context.auth.clearFailures()
  return ok(call)
}

function accounts({ context, res }: ControlCall) {
  const { auth, registry } = context
  return json(
    res,
    200,
    auth.accounts().map((a) => ({
      ...a,
      webhooks: registry.all(a.account).map(({ secret, ...w }) => w),
    })),
  )
}

async function trigger({ context, res, str, form }: ControlCall) {
  const type = str('type')
  if (!type) return json(res, 400, { error: 'type is required' })
  const webhookId = str('webhookId')
  if (webhookId !== undefined && context.registry.get(webhookId) === undefined)
    return json(res, 404, { error: `no webhook ${webhookId}` })
  const result = await context.deliveries.trigger(type, { webhookId, account: str('account') })
  const answers = result.deliveries.map((d) => d.status ?? d.error).join(', ')
  const said = `Sent ${type} (${result.event.id}) to ${result.deliveries.length} webhook(s): ${answers || 'none subscribed'}.`
  return done(context, res, form, 200, result, said)
}

async function redeliver({ context, res, str, form }: ControlCall) {
  const deliveryId = str('deliveryId')
  if (!deliveryId) return json(res, 400, { error: 'deliveryId is required' })
  let attempt: Awaited<ReturnType<Deliveries['redeliver']>>
  try {
    attempt = await context.deliveries.redeliver(deliveryId)
  } catch {
    return json(res, 404, { error: `no delivery ${deliveryId}` })
  }
  const said = `Redelivered ${attempt.type} (${attempt.payloadId}) to ${attempt.webhookId}: ${attempt.status ?? attempt.error}.`
  return done(context, res, form, 200, attempt, said)
}

function expireTokens({ context, res, str, form }: ControlCall) {
  const target = str('token') ?? str('account') ?? ''
  context.auth.expireAccessToken(target)
  return done(context, res, form, 200, { expired: true }, `Access tokens of ${target} expired.`)
}

function revokeGrants({ context, res, str, form }: ControlCall) {
  const account = str('account') ?? ''
  context.auth.revokeGrant(account)
  return done(context, res, form, 200, { revoked: true }, `Every grant of ${account} revoked.`)
}

function failAuth(call: ControlCall) {
  const { body } = call
  call.context.auth.failNext(
    ...Array.from(
      { length: Number(body.count ?? 1) },
      () => (Number(body.status ?? 500) === 503 ? 503 : 500) as 500 | 503,
    ),
  )
  return ok(call)
}

function setLatency(call: ControlCall) {
  call.context.auth.setLatency(Number(call.body.ms ?? 0))
  return ok(call)
}

/** The control routes, by method and path. */
const ROUTES: Record<string, Route> = {
  'GET /_control': overview,
  'POST /_control/webhooks': addWebhook,
  'POST /_control/webhooks/state': setWebhookState,
  'POST /_control/api-failures': failApi,
  'DELETE /_control/api-failures': clearFailures,
  'DELETE /_control/failures': clearFailures,
  'GET /_control/accounts': accounts,
  'POST /_control/trigger': trigger,
  'GET /_control/deliveries': ({ context, res }) => json(res, 200, context.deliveries.log),
  'POST /_control/redeliver': redeliver,
  'POST /_control/tokens/expire': expireTokens,
  'POST /_control/grants/revoke': revokeGrants,
  'POST /_control/failures': failAuth,
  'POST /_control/latency': setLatency,
}

export async function control(
  context: ControlContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
) {
  checkOwnRequest(context.address, req)
  const body = req.method === 'POST' ? await readJson(req) : {}
  const str = (k: string) => (typeof body[k] === 'string' ? (body[k] as string) : undefined)
  const route = Object.hasOwn(ROUTES, `${req.method} ${path}`)
    ? ROUTES[`${req.method} ${path}`]
    : undefined
  if (route === undefined) return json(res, 404, { error: 'not_found' })
  return route({ context, res, body, str, form: str('redirect') !== undefined })
}

export function dashboard(context: ControlContext, res: ServerResponse) {
  const { auth, registry, deliveries } = context
  const page = dashboardPage({
    webhooks: registry.all(),
    deliveries: deliveries.log,
    accounts: auth.accounts(),
    notice: context.notice,
  })
  context.notice = undefined
  res
    .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
    .end(page)
}
