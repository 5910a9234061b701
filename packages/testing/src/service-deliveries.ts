import type { AnyWebhookEvent } from '@scheduling-kit/core'
import type { FakeWebhook, WebhookApi } from '@scheduling-kit/fake-auth'
import { createTestEvent } from './events.js'
import type { EventBook } from './service-events.js'
import { id } from './service-http.js'
import type {
  DeliveryAttempt,
  FakeSchedulingServiceOptions,
  TriggerOptions,
} from './service-types.js'
import { signedRequest } from './sign.js'

/**
 * Why a delivery got no answer, in words: the time-out, or fetch's message with the system's
 * reason from its cause chain (`ECONNREFUSED 127.0.0.1:3000`, `ENOTFOUND`, a TLS code), never a
 * bare "fetch failed".
 */
export function deliveryError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `no answer within ${timeoutMs} ms (time-out)`
  const reasons: string[] = []
  let current: unknown = error
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const { code, address, port } = current as { code?: unknown; address?: unknown; port?: unknown }
    if (typeof code === 'string') {
      const where =
        typeof address === 'string'
          ? ` ${address}${port === undefined ? '' : `:${String(port)}`}`
          : ''
      reasons.push(`${code}${where}`)
    } else if (depth > 0) reasons.push(current.message)
    current = (current as { cause?: unknown }).cause
  }
  const message = error instanceof Error ? error.message : String(error)
  return reasons.length === 0 ? message : `${message} (${[...new Set(reasons)].join('; ')})`
}

/**
 * The fake service's webhook deliveries, signed and retried like the real service's: each
 * attempt logged, a failed one retried on the schedule, a webhook disabled after too many
 * failures in a row, and no more retries to one disabled or deleted since.
 */
export class Deliveries {
  /** Every attempt so far, oldest first. */
  readonly log: DeliveryAttempt[] = []
  readonly #timers = new Set<ReturnType<typeof setTimeout>>()
  readonly #inFlight = new Set<Promise<unknown>>()
  #idleWaiters: Array<() => void> = []
  /** Each delivery's event and webhook, for `redeliver`. */
  readonly #sent = new Map<string, { webhook: FakeWebhook; event: AnyWebhookEvent }>()
  readonly #schedule: readonly number[]
  readonly #timeoutMs: number

  constructor(
    readonly registry: WebhookApi,
    readonly options: FakeSchedulingServiceOptions,
    /** Where each `event.*` moves its Event to, for `GET /v1/events`. */
    readonly events?: EventBook,
  ) {
    this.#schedule = options.retrySchedule ?? [10_000, 60_000, 300_000, 1_800_000, 7_200_000]
    this.#timeoutMs = options.deliveryTimeoutMs ?? 10_000
  }

  #settleIdle(): void {
    if (this.#timers.size === 0 && this.#inFlight.size === 0)
      for (const resolve of this.#idleWaiters.splice(0)) resolve()
  }

  /** Whether a webhook still gets deliveries: it exists and is active. */
  #isLive(webhook: FakeWebhook): boolean {
    return this.registry.get(webhook.id)?.state === 'active'
  }

  /** One attempt; schedules the next on failure. Resolves to the attempt's record. */
  attempt(
    webhook: FakeWebhook,
    event: AnyWebhookEvent,
    deliveryId: string,
    n: number,
  ): Promise<DeliveryAttempt> {
    this.#sent.set(deliveryId, { webhook, event })
    const run = this.#send(webhook, event, deliveryId, n)
    this.#inFlight.add(run)
    void run.finally(() => {
      this.#inFlight.delete(run)
      this.#settleIdle()
    })
    return run
  }

  async #send(
    webhook: FakeWebhook,
    event: AnyWebhookEvent,
    deliveryId: string,
    n: number,
  ): Promise<DeliveryAttempt> {
    const record: DeliveryAttempt = {
      deliveryId,
      webhookId: webhook.id,
      payloadId: event.id,
      type: event.type,
      attempt: n,
      at: new Date().toISOString(),
      ok: false,
    }
    try {
      const { body, headers } = await signedRequest(event, {
        secret: webhook.secret,
        webhookId: webhook.id,
      })
      record.request = { headers, body: body.slice(0, 8 * 1024) }
      const res = await fetch(webhook.url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(this.#timeoutMs),
      })
      record.answer = (await res.text().catch(() => '')).slice(0, 2 * 1024)
      record.status = res.status
      record.ok = res.status >= 200 && res.status < 300
    } catch (error) {
      record.error = deliveryError(error, this.#timeoutMs)
    }
    webhook.failures = record.ok ? 0 : webhook.failures + 1
    const disableAfter = this.options.disableAfter
    if (!record.ok && disableAfter !== undefined && webhook.failures >= disableAfter) {
      this.registry.setState(webhook.id, 'disabled')
    }
    const delay = this.#schedule[n - 1]
    if (!record.ok && delay !== undefined && this.#isLive(webhook)) {
      record.retryAt = new Date(Date.now() + delay).toISOString()
      const timer = setTimeout(() => {
        this.#timers.delete(timer)
        // A webhook disabled or deleted since gets no more retries.
        if (this.#isLive(webhook)) void this.attempt(webhook, event, deliveryId, n + 1)
        else this.#settleIdle()
      }, delay)
      this.#timers.add(timer)
    }
    this.log.push(record)
    return record
  }

  /** Where an event goes: one webhook, an account's active ones, or the app-wide ones. */
  #targetsOf(type: string, webhookId?: string, account?: string): FakeWebhook[] {
    if (webhookId !== undefined) {
      const one = this.registry.get(webhookId)
      return one !== undefined && one.state === 'active' ? [one] : []
    }
    const live = this.registry
      .all(account ?? null)
      .filter((w) => w.state === 'active' && (w.events.length === 0 || w.events.includes(type)))
    return account !== undefined && this.options.deliverToEachWebhook === false
      ? live.slice(-1)
      : live
  }

  /** Sends an event where it goes; resolves after the first attempts. */
  async trigger(type: string, overrides?: TriggerOptions) {
    const { webhookId, account, lost, ...rest } = overrides ?? {}
    const event = createTestEvent(type, rest)
    this.events?.record(
      account ?? (webhookId === undefined ? undefined : this.registry.get(webhookId)?.account),
      event,
    )
    const targets = lost === true ? [] : this.#targetsOf(type, webhookId, account)
    const deliveries = await Promise.all(targets.map((w) => this.attempt(w, event, id('dlv'), 1)))
    return { event, deliveries }
  }

  /** The same event to the same webhook again: a new delivery, with its own retries. */
  redeliver(deliveryId: string): Promise<DeliveryAttempt> {
    const sent = this.#sent.get(deliveryId)
    if (sent === undefined) throw new Error(`no delivery ${deliveryId}`)
    return this.attempt(sent.webhook, sent.event, id('dlv'), 1)
  }

  /** Resolves when no delivery is in flight or waiting for a retry. */
  idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#idleWaiters.push(resolve)
      this.#settleIdle()
    })
  }

  /** Cancels every retry waiting for its time. */
  stop(): void {
    for (const timer of this.#timers) clearTimeout(timer)
    this.#timers.clear()
    this.#idleWaiters = []
  }
}
