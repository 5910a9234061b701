import type { Logger, OAuthResponse, WebhookResponse } from '@scheduling-kit/core'
import { consoleLogger, parserRefusalReporter } from '@scheduling-kit/core/adapter'
import type { Context } from 'koa'

const appLoggers = new WeakMap<Context['app'], Logger>()
/** Marks the errors this adapter hands to the app's `error` event itself. */
const OWN_ERROR = Symbol('scheduling-kit')
const watchedApps = new WeakSet<Context['app']>()

/**
 * A body parser mounted before the middleware refuses a malformed webhook body itself, and
 * Koa's default `error` listener prints each refusal's stack. When that default is the app's
 * only listener, refusals (4xx) on the webhook path go to core's summary instead; every other
 * error still reaches Koa's listener. From the first request the middleware sees.
 */
export function summariseParserRefusals(app: Context['app'], path: string): void {
  if (watchedApps.has(app)) return
  watchedApps.add(app)
  const listeners = app.listeners('error')
  if (listeners.length !== 1 || listeners[0] !== app.onerror) return
  const report = parserRefusalReporter(path)
  app.removeListener('error', app.onerror)
  app.on('error', (error: { status?: unknown; message?: unknown }, ctx?: Context) => {
    const status = error?.status
    const refused =
      typeof status === 'number' &&
      status >= 400 &&
      status < 500 &&
      // The path as mounted (koa-mount strips its prefix only inside).
      (ctx?.path === path || ctx?.path.endsWith(path) === true)
    if (!refused || (error as Record<symbol, unknown>)[OWN_ERROR])
      return app.onerror(error as Error)
    report(status, String(error.message))
  })
}

/**
 * Koa's way to report errors: errors go to the app's `error` event (Koa prints their stack
 * unless you listen to it), the rest to the console.
 */
export function koaLogger(ctx: Context): Logger {
  const app = ctx.app
  let logger = appLoggers.get(app)
  if (logger === undefined) {
    logger = {
      ...consoleLogger,
      error(message) {
        const error = Object.assign(new Error(message.split('\n', 1)[0]), {
          status: 500,
          [OWN_ERROR]: true,
        })
        error.stack = message
        app.emit('error', error)
      },
    }
    appLoggers.set(app, logger)
  }
  return logger
}

export function send(ctx: Context, answer: WebhookResponse | OAuthResponse): void {
  ctx.status = answer.status
  ctx.set(answer.headers)
  ctx.body = answer.body
}
