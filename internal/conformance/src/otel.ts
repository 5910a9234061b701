// An OpenTelemetry SDK in the test's process: spans kept in memory, metrics read on demand, the
// context carried by AsyncLocalStorage and W3C trace context as the propagator, as an app's SDK
// setup has them.
import * as api from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import {
  type DataPoint,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics'
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace'
import { expect } from 'vitest'

class Reader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

export interface TestSdk {
  spans(): ReadableSpan[]
  /** The spans of one name. */
  named(name: string): ReadableSpan[]
  reset(): void
  collect(): Promise<ResourceMetrics>
  /** The data points of one metric (cumulative since the SDK started). */
  points(name: string): Promise<DataPoint<unknown>[]>
  shutdown(): Promise<void>
}

/** What points a copy of scheduling-kit at an API (its `useOpenTelemetry`). */
export type UseOpenTelemetry = (api: typeof import('@opentelemetry/api') | false) => void

/**
 * Registers an SDK globally and points scheduling-kit at the API, through the `use` of the
 * copy under test (the source's in core's tests, the build's elsewhere).
 */
export function installSdk(
  use: UseOpenTelemetry,
  options: { metrics?: boolean; traces?: boolean } = {},
): TestSdk {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  })
  const reader = new Reader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  if (options.traces !== false) api.trace.setGlobalTracerProvider(tracerProvider)
  if (options.metrics !== false) api.metrics.setGlobalMeterProvider(meterProvider)
  use(api)
  const collect = async () => (await reader.collect()).resourceMetrics
  return {
    spans: () => exporter.getFinishedSpans(),
    named: (name) => exporter.getFinishedSpans().filter((span) => span.name === name),
    reset: () => exporter.reset(),
    collect,
    async points(name) {
      const metrics = (await collect()).scopeMetrics.flatMap((scope) => scope.metrics)
      return metrics
        .filter((metric) => metric.descriptor.name === name)
        .flatMap((metric) => metric.dataPoints as DataPoint<unknown>[])
    },
    async shutdown() {
      api.trace.disable()
      api.metrics.disable()
      api.context.disable()
      api.propagation.disable()
      use(false)
      await tracerProvider.shutdown()
      await meterProvider.shutdown()
    },
  }
}

/** The ids that tie a span to its trace and parent. */
export const idsOf = (span: ReadableSpan) => ({
  traceId: span.spanContext().traceId,
  spanId: span.spanContext().spanId,
  parent: span.parentSpanContext?.spanId,
})

/**
 * What a queue package must show for one delivery run by its worker (`@scheduling-kit/bullmq`,
 * `@scheduling-kit/postgres-queue`): a producer span `send <queue>` under the delivery's span, a
 * consumer span `process <queue>` that continues the delivery's trace as the send span's child
 * and links to it, and the handler's span under the job's.
 */
export function expectTraceAcrossQueue(
  sdk: TestSdk,
  expected: { queueName: string; system: string; jobId: string; payloadId: string },
): void {
  const [delivery] = sdk.named('scheduling.webhook.delivery')
  const [send] = sdk.named(`send ${expected.queueName}`)
  const [job] = sdk.named(`process ${expected.queueName}`)
  const [fn] = sdk.named('scheduling.webhook.handler')
  expect(send!.kind).toBe(api.SpanKind.PRODUCER)
  expect(send!.attributes).toMatchObject({
    'messaging.system': expected.system,
    'messaging.destination.name': expected.queueName,
    'scheduling.payload.id': expected.payloadId,
  })
  expect(job!.kind).toBe(api.SpanKind.CONSUMER)
  expect(job!.attributes).toMatchObject({
    'messaging.system': expected.system,
    'messaging.operation.type': 'process',
    'messaging.message.id': expected.jobId,
    'messaging.message.delivery_count': 1,
    'scheduling.event.type': 'event.created',
  })
  expect(idsOf(job!).traceId).toBe(idsOf(delivery!).traceId)
  expect(idsOf(job!).parent).toBe(idsOf(send!).spanId)
  expect(job!.links.map((l) => l.context.spanId)).toEqual([idsOf(send!).spanId])
  expect(idsOf(fn!).parent).toBe(idsOf(job!).spanId)
  expect(idsOf(fn!).traceId).toBe(idsOf(delivery!).traceId)
}

/** The SDK above as the queue battery's trace probe (`QueueKit.traces`). */
export function queueTraceProbe(use: UseOpenTelemetry): {
  spans(): {
    name: string
    traceId: string
    spanId: string
    parentSpanId?: string
    links: string[]
  }[]
  close(): Promise<void>
} {
  const sdk = installSdk(use, { metrics: false })
  return {
    spans: () =>
      sdk.spans().map((span) => ({
        name: span.name,
        ...idsOf(span),
        parentSpanId: idsOf(span).parent,
        links: span.links.map((link) => link.context.spanId),
      })),
    close: () => sdk.shutdown(),
  }
}
