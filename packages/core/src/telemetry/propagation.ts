import type * as Otel from '@opentelemetry/api'
import { type Context, otel, type Traced } from './otel.js'

type Api = typeof Otel

// Carrying a trace across the queue: W3C trace context, through the app's propagator when it
// has one, else written and read here (the SDK's default propagator writes the same header).

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/** The W3C trace context of a span, as headers (`traceparent`, `tracestate`). */
export function traceCarrier(traced: Traced | undefined): Record<string, string> | undefined {
  if (traced === undefined) return undefined
  const carrier: Record<string, string> = {}
  try {
    // A span records, so the API is at hand.
    otel()?.propagation.inject(traced.ctx, carrier)
  } catch {
    // A propagator that throws: the trace context is written below.
  }
  if (carrier.traceparent === undefined) {
    const { traceId, spanId, traceFlags } = traced.span.spanContext()
    carrier.traceparent = `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`
  }
  // Only the trace context crosses: baggage may hold anything.
  const out: Record<string, string> = { traceparent: carrier.traceparent }
  if (carrier.tracestate !== undefined) out.tracestate = carrier.tracestate
  return out
}

/** The remote context a carrier holds, for a consumer's span: `undefined` when it holds none. */
export function contextFrom(carrier: unknown): { ctx: Context; link: Otel.Link } | undefined {
  const a = otel()
  if (a === null || typeof carrier !== 'object' || carrier === null) return undefined
  try {
    return remoteContext(a, carrier)
  } catch {
    return undefined
  }
}

function remoteContext(a: Api, carrier: object): { ctx: Context; link: Otel.Link } | undefined {
  const { traceparent, tracestate } = carrier as Record<string, unknown>
  if (typeof traceparent !== 'string') return undefined
  const headers: Record<string, string> = { traceparent }
  if (typeof tracestate === 'string') headers.tracestate = tracestate
  let ctx = a.propagation.extract(a.context.active(), headers)
  let spanContext = a.trace.getSpanContext(ctx)
  if (spanContext === undefined || !a.trace.isSpanContextValid(spanContext)) {
    const parts = TRACEPARENT.exec(traceparent)
    if (parts === null) return undefined
    spanContext = {
      traceId: parts[1]!,
      spanId: parts[2]!,
      traceFlags: Number.parseInt(parts[3]!, 16),
      isRemote: true,
    }
    if (!a.trace.isSpanContextValid(spanContext)) return undefined
    ctx = a.trace.setSpanContext(a.context.active(), spanContext)
  }
  return { ctx, link: { context: spanContext } }
}
