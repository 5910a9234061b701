import { createServer, type Server } from 'node:http'
import {
  type AdapterHarness,
  captureConsole,
  failWritesWhenAsked,
  runConformance,
} from '@scheduling-kit/conformance'
import { H3, readBody } from 'h3'
import { toNodeHandler } from 'h3/node'
import { schedulingOAuth, schedulingWebhooks } from '../src/index.js'

const harness: AdapterHarness = {
  name: 'h3',
  // h3 has no global body parser: routes read the web Request's body themselves, or a
  // middleware placed first reads it with readBody and keeps the value in event.context.body.
  parsers: ['after', 'before'],
  parserFirst: ['before'],
  parsedBefore: 'serialized',
  configurable: true,
  answerWrittenBy: 'server',
  async start(port, setup) {
    // h3 has no logger of its own: the middleware logs to the console.
    const release = captureConsole(setup.logged)
    const app = new H3({
      onError: (error) => void setup.frameworkErrors.push(error.message),
    })
    app.use((event) => {
      const node = event.runtime?.node
      if (node?.res) failWritesWhenAsked(node.req.headers, node.res)
    })
    if (setup.parser === 'before') {
      app.use(async (event) => {
        if (
          event.req.method === 'POST' &&
          event.req.headers.get('content-type')?.includes('json')
        ) {
          event.context.body = await readBody(event)
        }
      })
    }
    const webhooks = schedulingWebhooks(setup.webhooks)
    setup.configure?.(webhooks)
    if (setup.prefix) app.mount(setup.prefix, new H3().use(webhooks))
    else app.use(webhooks)
    app.mount('/auth/scheduling', schedulingOAuth(setup.oauth))
    app.get('/app/ping', () => ({ pong: true }))
    app.post('/app/echo', async (event) => ({
      echo: event.context.body ?? (await event.req.json()),
    }))
    const server: Server = createServer(toNodeHandler(app))
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
