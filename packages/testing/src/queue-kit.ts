import assert from 'node:assert/strict'
import type { DeliveryLedger, WebhookHandler, WebhookQueue } from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './conformance-options.js'
import { serveWebhooks } from './handler-server.js'

// What a queue package gives the queue battery, and the helpers its tests share: a queue of the
// test's own, its workers, and waiting on what they did.

/** What a queue package gives the kit for each test: its own queue, and workers on it. */
export interface QueueUnderTest {
  /** A queue on a name (or schema) of this test's own. */
  queue: WebhookQueue & { close(): Promise<void> }
  /**
   * Starts a worker on that queue running `handler.dispatch`, recording in `ledger` when
   * given. Several may run at once.
   */
  worker(options: {
    handler: WebhookHandler
    ledger?: DeliveryLedger
    concurrency?: number
  }): Promise<{ close(): Promise<void> }>
  /** Drops what the test made (the queue's jobs, its tables or keys). */
  cleanup?(): Promise<void>
}

/** A finished span, as the kit reads it from your OpenTelemetry SDK. */
export interface ProbedSpan {
  name: string
  traceId: string
  spanId: string
  parentSpanId?: string
  /** The span ids it links to. */
  links: string[]
}

/**
 * An OpenTelemetry SDK registered for one test (scheduling-kit pointed at it with
 * `useOpenTelemetry`), whose finished spans the kit reads.
 */
export interface QueueTraceProbe {
  spans(): ProbedSpan[]
  /** Unregisters the SDK. */
  close(): Promise<void>
}

export interface QueueKit {
  /** How long a test waits for its jobs to run, in ms. Default 20 000. */
  timeoutMs?: number
  /**
   * Registers an OpenTelemetry SDK for the trace test: with it, the battery also checks that a
   * delivery's trace crosses the queue (the worker's `process` span continues it). Without it
   * that test is not run: give it if your queue carries the delivery's trace.
   */
  traces?(): QueueTraceProbe
  /**
   * A fresh queue whose jobs get `attempts` attempts, `backoffMs` apart at first. The kit
   * asks for small numbers: its tests wait for retries.
   */
  create(options: { attempts: number; backoffMs: number }): Promise<QueueUnderTest>
  /** A queue whose backend cannot be reached (a closed port): every enqueue must fail. */
  unreachable(): Promise<WebhookQueue & { close(): Promise<void> }>
}

export const SECRET = 'queue-conformance-secret'
export const quiet = { debug() {}, info() {}, warn() {}, error() {} }

/** Waits until `check` holds, up to `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms: number, what: string) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** An HTTP server answering with `handler`, on a port of its own. */
export const serve = (handler: WebhookHandler) => serveWebhooks(() => handler)

/** Runs `body` with a queue of the kit's, then closes whatever it started. */
export async function withQueue(
  kit: QueueKit,
  options: { attempts: number; backoffMs: number },
  body: (q: QueueUnderTest, later: (close: () => Promise<void>) => void) => Promise<void>,
): Promise<void> {
  const q = await kit.create(options)
  const closers: Array<() => Promise<void>> = []
  try {
    await body(q, (close) => void closers.push(close))
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {})
    await q.queue.close().catch(() => {})
    await q.cleanup?.().catch(() => {})
  }
}

export type It = StoreConformanceOptions['it']
