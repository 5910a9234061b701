// OpenTelemetry for one process of the deployment, when OTEL_EXPORTER_OTLP_ENDPOINT names a
// collector: spans batched to it over OTLP/HTTP, the context carried by AsyncLocalStorage,
// W3C trace context as the propagator. scheduling-kit finds @opentelemetry/api by itself and
// reports through it: nothing else in the app mentions telemetry. Imported first by app.ts
// and worker.ts.
import { context, propagation, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'

const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT
if (endpoint !== undefined && endpoint !== '') {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': 'scheduling-demo',
      'service.instance.id': process.env.INSTANCE ?? 'worker',
    }),
    spanProcessors: [
      // The exporter reads the endpoint (and its /v1/traces path) from the environment.
      new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), scheduledDelayMillis: 500 }),
    ],
  })
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  trace.setGlobalTracerProvider(provider)
  // Stopping: what is batched is sent before the process exits.
  process.once('SIGTERM', () => {
    provider.shutdown().finally(() => process.exit(0))
  })
}
