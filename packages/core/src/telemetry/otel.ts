// OpenTelemetry, when the app has `@opentelemetry/api` (an optional peer dependency): spans
// and metrics through its global providers, which an SDK fills. Without the package, or with
// `useOpenTelemetry(false)`, every entry point here returns `undefined` after one comparison.
// Without an SDK, the API's tracer makes non-recording spans: a delivery starts one and
// nothing more. Attribute values are ids, codes, counts and addresses only: see attributes.ts.

import type * as Otel from '@opentelemetry/api'
import { isSchedulingError } from '../errors/errors.js'
import { loadOpenTelemetry } from './api/default.js'
import { registered, setGiven } from './registered.js'

type Api = typeof Otel
export type Context = Otel.Context
export type Attributes = Otel.Attributes

/** What `useOpenTelemetry` takes: the `@opentelemetry/api` module (`import * as api from ...`). */
export interface OpenTelemetryApi {
  trace: object
  context: object
  metrics: object
  propagation: object
}

/** The instrumentation scope every span and metric is reported under. */
export const SCOPE = '@scheduling-kit/core'

// SpanKind and SpanStatusCode values, stable across the API's 1.x.
export const INTERNAL = 0
export const CLIENT = 2
export const PRODUCER = 3
export const CONSUMER = 4
const STATUS_ERROR = 2

/** `undefined`: not looked for yet; `null`: absent or turned off. */
let api: Api | null | undefined
let tracer: Otel.Tracer | undefined

function isApi(value: unknown): value is Api {
  const candidate = value as Partial<Api> | undefined
  return (
    typeof candidate?.trace?.getTracer === 'function' &&
    typeof candidate.context?.active === 'function' &&
    typeof candidate.metrics?.getMeterProvider === 'function' &&
    typeof candidate.propagation?.inject === 'function'
  )
}

/**
 * The API module, looked for once something registered with it (on the node build; elsewhere it
 * must be given). Until then `null`, asked again on the next call: an SDK started after the app's
 * handler was made is found then.
 */
export function otel(): Api | null {
  if (api === undefined) {
    if (!registered()) return null
    let found: unknown
    try {
      found = loadOpenTelemetry()
    } catch {
      found = undefined
    }
    api = isApi(found) ? found : null
  }
  return api
}

/** Counts the changes of the API in use, so what was made with an earlier one is made again. */
let generation = 0
export const apiGeneration = (): number => generation

/** `useOpenTelemetry`'s part for every span and metric (webhooks/telemetry/use.ts). */
export function setOpenTelemetry(given: OpenTelemetryApi | false): void {
  if (given !== false && !isApi(given)) {
    throw new TypeError(
      'useOpenTelemetry: pass the @opentelemetry/api module (import * as api from "@opentelemetry/api"), or false.',
    )
  }
  api = given === false ? null : given
  setGiven(given !== false)
  tracer = undefined
  generation++
}

/** A recording span and the context that has it as the active span. */
export interface Traced {
  span: Otel.Span
  ctx: Context
}

export interface SpanStart {
  kind?: number
  attributes?: Attributes
  /** The parent: a traced span, a context, else the active context. */
  parent?: Traced | Context
  links?: Otel.Link[]
}

/**
 * Starts a span; `undefined` when nothing would record it (no API, no SDK, sampled out), so
 * the caller skips the rest of its telemetry work.
 */
export function startSpan(name: string, start: SpanStart = {}): Traced | undefined {
  const a = api === undefined ? otel() : api
  if (a === null) return undefined
  try {
    return spanOf(a, name, start)
  } catch {
    // An SDK that throws (a span processor's onStart, say) costs its spans, never a delivery.
    return undefined
  }
}

function spanOf(a: Api, name: string, start: SpanStart): Traced | undefined {
  const { parent } = start
  const base =
    parent === undefined
      ? a.context.active()
      : 'span' in parent && 'ctx' in parent
        ? (parent as Traced).ctx
        : (parent as Context)
  tracer ??= a.trace.getTracer(SCOPE)
  const span = tracer.startSpan(
    name,
    { kind: start.kind ?? INTERNAL, attributes: start.attributes, links: start.links },
    base,
  )
  if (!span.isRecording()) return undefined
  return { span, ctx: a.trace.setSpan(base, span) }
}

/** The longest id or type put in an attribute: ids are short; a longer header is cut. */
const MAX_ATTRIBUTE = 128

/** Text of the sender's choosing, made fit for an attribute: printable ASCII, capped. */
export function attributeText(value: string): string {
  const cut = value.length > MAX_ATTRIBUTE ? value.slice(0, MAX_ATTRIBUTE) : value
  return cut.replace(/[^\x20-\x7e]/g, '?')
}

/** `error.type` of an error: its scheduling-kit code, else its class name. */
export function errorType(error: unknown): string {
  if (isSchedulingError(error)) return error.code
  if (error instanceof Error && /^[A-Za-z_$][\w$]{0,63}$/.test(error.name)) return error.name
  return '_OTHER'
}

/**
 * Ends a span, as failed with `error.type` when `error` is given. The error's message is not
 * recorded: a handler's or a driver's message may carry anything.
 */
export function endSpan(
  traced: Traced | undefined,
  error?: unknown,
  attributes?: Attributes,
): void {
  if (traced === undefined) return
  finishSpan(traced, attributes, error === undefined ? undefined : errorType(error))
}

/**
 * Ends a span with `attributes`; `failed` (an `error.type`) marks it failed. Whatever the SDK
 * throws here is dropped: telemetry never changes an answer.
 */
export function finishSpan(
  traced: Traced | undefined,
  attributes: Attributes | undefined,
  failed?: string,
): void {
  if (traced === undefined) return
  const { span } = traced
  try {
    if (attributes !== undefined) span.setAttributes(attributes)
    if (failed !== undefined) {
      span.setAttribute('error.type', failed)
      span.setStatus({ code: STATUS_ERROR, message: failed })
    }
  } catch {
    // See above.
  }
  try {
    span.end()
  } catch {
    // See above.
  }
}

/** Sets attributes on a span under way, when there is one; never throws. */
export function setAttributes(traced: Traced | undefined, attributes: Attributes): void {
  try {
    traced?.span.setAttributes(attributes)
  } catch {
    // Telemetry never changes an answer.
  }
}

/** Runs `fn` with the span's context active (so spans of the code it calls nest under it). */
export function within<T>(traced: Traced | undefined, fn: () => T): T {
  // The API may have been turned off since the span started: then just run.
  const a = api
  if (traced === undefined || a == null) return fn()
  return a.context.with(traced.ctx, fn)
}

/** Adds an event to a span, when there is one. */
export function spanEvent(traced: Traced | undefined, name: string, attributes?: Attributes): void {
  try {
    traced?.span.addEvent(name, attributes)
  } catch {
    // Telemetry never changes an answer.
  }
}

/** The span of the active context, for code that was handed no parent. */
export function activeSpan(): Traced | undefined {
  const a = api === undefined ? otel() : api
  if (a === null) return undefined
  try {
    const ctx = a.context.active()
    const span = a.trace.getSpan(ctx)
    return span?.isRecording() ? { span, ctx } : undefined
  } catch {
    return undefined
  }
}

/** Runs `fn` with `traced` active, and ends it as `fn` ends: failed when it throws. */
export async function runInSpan<T>(traced: Traced | undefined, fn: () => Promise<T>): Promise<T> {
  try {
    const value = await within(traced, fn)
    endSpan(traced)
    return value
  } catch (error) {
    endSpan(traced, error)
    throw error
  }
}

/** Runs `fn` in a child span of `parent` (none when `parent` is undefined), ended as it ends. */
export function inChildSpan<T>(
  name: string,
  parent: Traced | undefined,
  fn: () => Promise<T>,
  kind = INTERNAL,
): Promise<T> {
  if (parent === undefined) return fn()
  return runInSpan(startSpan(name, { parent, kind }), fn)
}
