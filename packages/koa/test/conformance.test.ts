import { createServer, type Server } from 'node:http'
import { bodyParser } from '@koa/bodyparser'
import {
  type AdapterHarness,
  captureConsole,
  failWritesWhenAsked,
  runConformance,
} from '@scheduling-kit/conformance'
import Koa from 'koa'
import mount from 'koa-mount'
import { schedulingOAuth, schedulingWebhooks } from '../src/index.js'

const harness: AdapterHarness = {
  name: 'koa',
  // @koa/bodyparser keeps ctx.request.rawBody, so a parser before the middleware is fine.
  parsers: ['before', 'after'],
  parserFirst: ['before'],
  parsedBefore: 'raw',
  configurable: true,
  answerWrittenBy: 'framework',
  async start(port, setup) {
    // Koa's way: errors reach the app's error event (Koa prints their stack when nobody
    // listens); warnings go to the console.
    const release = captureConsole(setup.logged)
    const app = new Koa()
    app.on('error', (error: Error) => {
      setup.frameworkErrors.push(error.message)
      setup.logged.push(error.stack ?? error.message)
    })
    app.use(async (ctx, next) => {
      failWritesWhenAsked(ctx.req.headers, ctx.res)
      await next()
    })
    const webhooks = schedulingWebhooks(setup.webhooks)
    setup.configure?.(webhooks)
    if (setup.parser === 'before') app.use(bodyParser())
    app.use(setup.prefix ? mount(setup.prefix, webhooks) : webhooks)
    if (setup.parser === 'after') app.use(bodyParser())
    app.use(schedulingOAuth({ ...setup.oauth, prefix: '/auth/scheduling' }))
    app.use(async (ctx, next) => {
      if (ctx.method === 'GET' && ctx.path === '/app/ping') ctx.body = { pong: true }
      else if (ctx.method === 'POST' && ctx.path === '/app/echo')
        ctx.body = { echo: ctx.request.body }
      else await next()
    })
    const server: Server = createServer(app.callback())
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    return {
      close: () =>
        new Promise<void>((resolve) => {
          release()
          server.closeAllConnections()
          server.close(() => resolve())
        }),
    }
  },
}

runConformance(harness)
