import type { Server } from 'node:http'
import {
  type AdapterHarness,
  captureConsole,
  failWritesWhenAsked,
  runConformance,
} from '@scheduling-kit/conformance'
import express5 from 'express'
// Express 4 too: the same suite through the same middleware.
import express4 from 'express4'
import { keepRawBody, schedulingOAuth, schedulingWebhooks } from '../src/index.js'

const harness = (name: string, express: typeof express5): AdapterHarness => ({
  name,
  parsers: ['before', 'before-raw', 'text-before', 'after'],
  parserFirst: ['before', 'before-raw', 'text-before'],
  parsedBefore: 'serialized',
  configurable: true,
  answerWrittenBy: 'framework',
  async start(port, setup) {
    // Express has no logger of its own: the middleware logs to the console.
    const release = captureConsole(setup.logged)
    const app = express()
    app.use((req, res, next) => {
      failWritesWhenAsked(req.headers, res)
      next()
    })
    const webhooks = schedulingWebhooks(setup.webhooks)
    setup.configure?.(webhooks)
    const json = express.json({ verify: setup.parser === 'before-raw' ? keepRawBody : undefined })
    if (setup.parser === 'before' || setup.parser === 'before-raw') app.use(json)
    // The forms parser most apps mount beside it: it leaves a JSON request alone.
    if (setup.parser === 'before') app.use(express.urlencoded({ extended: false }))
    if (setup.parser === 'text-before') app.use(express.text({ type: 'application/json' }))
    if (setup.prefix) app.use(setup.prefix, webhooks)
    else app.use(webhooks)
    if (setup.parser === 'after') app.use(json)
    app.use('/auth/scheduling', schedulingOAuth(setup.oauth))
    app.get('/app/ping', (_req, res) => void res.json({ pong: true }))
    app.post('/app/echo', (req, res) => void res.json({ echo: req.body }))
    app.use((error: Error, _req: express5.Request, res: express5.Response, _next: () => void) => {
      setup.frameworkErrors.push(error.message)
      res.status(500).end()
    })
    const server: Server = await new Promise((resolve) => {
      const s = app.listen(port, '127.0.0.1', () => resolve(s))
    })
    return {
      close: () =>
        new Promise<void>((resolve) => {
          release()
          server.closeAllConnections()
          server.close(() => resolve())
        }),
    }
  },
})

runConformance(harness('express 5', express5))
runConformance(harness('express 4', express4 as unknown as typeof express5))
