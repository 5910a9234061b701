// Options read at first use, not when the module that holds them loads. A framework that imports
// every route to collect its configuration (`next build`) does so without the runtime's
// environment: an object made here stands for the real one, builds it at the first read of a
// member, and tells the factories below it (`createWebhookHandler`, `createOAuthRoutes`) to wait
// the same way. A build that throws is not kept: the next read builds again and throws what
// the eager call would have thrown, at the first request instead of at import.

/**
 * How a factory below makes a part of a deferred object that waits for the build: handed the
 * factory's own making from the built object, it gives a part that makes it at first use.
 */
export type Wait<B, R> = (make: (built: B) => R) => R

/** The parts each deferred object made here makes wait, by kind (`webhooks`, `oauth`). */
const waiting = new WeakMap<object, object>()

/**
 * How the deferred object `value` makes a part of `kind` wait, when `value` is one made by
 * `deferredObject` that names that kind; else undefined (the factory builds as it always did).
 */
export function deferredPart<B, R>(value: unknown, kind: string): Wait<B, R> | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const kinds = waiting.get(value) as Record<string, Wait<B, R> | undefined> | undefined
  return kinds?.[kind]
}

/** What a deferred object keeps apart from its build: members that wait, and the parts made of it. */
export interface Deferral<T> {
  /** Members that wait themselves (a deferred handler): read without building. */
  members?: Partial<T>
  /** How each kind of part a factory makes of the object waits: a `Wait` by kind (see `deferredPart`). */
  wait?: object
}

/** Whether `value` is a promise (a build given as an async function). */
export function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}

/**
 * Builds once: the first build that returns (or resolves) is kept, one that throws (or
 * rejects) is tried again. A build may be asynchronous: `get()` waits for it, `value` reads
 * only what is built, and throws `pending()` while an asynchronous build has not resolved.
 */
export class Once<T> {
  readonly #build: () => T | Promise<T>
  readonly #pendingError: () => Error
  #value: { built: T } | undefined
  #pending: Promise<T> | undefined

  constructor(build: () => T | Promise<T>, pending: () => Error = () => new Error('not built')) {
    this.#build = build
    this.#pendingError = pending
  }

  /** The built value, built now by a synchronous build. */
  get value(): T {
    if (this.#value !== undefined) return this.#value.built
    if (this.#pending === undefined) {
      const out = this.#build()
      if (!isPromise(out)) {
        this.#value = { built: out }
        return out
      }
      this.#wait(out)
    }
    throw this.#pendingError()
  }

  /** The built value, once its build (synchronous or not) has returned. */
  async get(): Promise<T> {
    if (this.#value !== undefined) return this.#value.built
    if (this.#pending !== undefined) return await this.#pending
    const out = this.#build()
    if (!isPromise(out)) {
      this.#value = { built: out }
      return out
    }
    return await this.#wait(out)
  }

  /** The built value, or undefined while it is not (nothing is built by reading this). */
  get done(): T | undefined {
    return this.#value?.built
  }

  #wait(out: Promise<T>): Promise<T> {
    const pending = out.then(
      (built) => {
        this.#value = { built }
        this.#pending = undefined
        return built
      },
      (error: unknown) => {
        this.#pending = undefined
        throw error
      },
    )
    // A build started by a read of `value` that nobody waits for is not an unhandled rejection:
    // its error is thrown again by the next read, which builds again.
    pending.catch(() => {})
    this.#pending = pending
    return pending
  }
}

/**
 * An object that reads as the one `build` returns, built at the first read of any member but
 * those `deferral` keeps (it is handed the build, a wait for it, and what is built so far). An asynchronous build
 * (`lazyScheduling`) is started by that read, which throws `pending()` until it resolves: the
 * members `deferral` keeps wait for it instead. A symbol and `then` read as absent without
 * building: inspecting or awaiting the object does not build it.
 */
export function deferredObject<T extends object>(
  build: () => T | Promise<T>,
  deferral: (
    built: () => T,
    ready: () => Promise<T>,
    now: () => T | undefined,
  ) => Deferral<T> = () => ({}),
  pending?: () => Error,
): T {
  const once = new Once(build, pending)
  const real = () => once.value as object
  const { members: kept = {}, wait = {} } = deferral(
    () => once.value,
    () => once.get(),
    () => once.done,
  )
  const proxy = new Proxy({} as T, {
    get: (_target, key) => {
      if (typeof key === 'symbol' || key === 'then') return undefined
      if (Object.hasOwn(kept, key)) return (kept as Record<string, unknown>)[key]
      return Reflect.get(real(), key)
    },
    has: (_target, key) => Object.hasOwn(kept, key) || Reflect.has(real(), key),
    ownKeys: () => [...new Set([...Reflect.ownKeys(real()), ...Reflect.ownKeys(kept)])],
    getOwnPropertyDescriptor: (_target, key) => {
      if (Object.hasOwn(kept, key))
        return {
          value: (kept as Record<PropertyKey, unknown>)[key],
          enumerable: true,
          configurable: true,
        }
      const found = Reflect.getOwnPropertyDescriptor(real(), key)
      return found === undefined ? undefined : { ...found, configurable: true }
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  })
  waiting.set(proxy, wait)
  return proxy
}
