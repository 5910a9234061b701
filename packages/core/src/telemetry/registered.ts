// Whether anything could record telemetry, asked without loading any of it: what the webhook
// handler reads before it loads its telemetry (webhooks/telemetry/switch.ts), so an app that never starts
// an OpenTelemetry SDK pays for none of it, in bytes or at start-up.

/**
 * Where the API (1.x, in any copy) keeps what an SDK registers: the tracer, meter and context
 * providers. It is there once anything registered, and only then.
 */
const REGISTERED = /* @__PURE__ */ Symbol.for('opentelemetry.js.api.1')

/** `true`: an API was given (`useOpenTelemetry(api)`); `false`: turned off; else not said. */
let given: boolean | undefined

/** Called by `useOpenTelemetry`. */
export function setGiven(value: boolean): void {
  given = value
}

/** Whether an SDK (or anything else) registered with the OpenTelemetry API. */
export const registered = (): boolean =>
  (globalThis as { [REGISTERED]?: unknown })[REGISTERED] !== undefined

/** Whether telemetry may record: an API given, or something registered with one. */
export const mayObserve = (): boolean => given ?? registered()

/** Whether telemetry was turned off (`useOpenTelemetry(false)`). */
export const turnedOff = (): boolean => given === false
