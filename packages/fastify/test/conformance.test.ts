import {
  type AdapterHarness,
  failWritesWhenAsked,
  runConformance,
} from '@scheduling-kit/conformance'
import Fastify from 'fastify'
import { schedulingOAuth, schedulingWebhooks } from '../src/index.js'

const harness: AdapterHarness = {
  name: 'fastify',
  // The app keeps Fastify's default JSON parser; the plugin's own parser is encapsulated.
  parsers: ['before'],
  parserFirst: [],
  parsedBefore: 'raw',
  configurable: false,
  answerWrittenBy: 'framework',
  async start(port, setup) {
    // Fastify's own logger, as an app has it on: the plugin logs through request.log.
    const app = Fastify({
      logger: {
        level: 'info',
        stream: { write: (line: string) => void setup.logged.push(JSON.parse(line).msg) },
      },
    })
    app.addHook('onRequest', async (request, reply) => {
      failWritesWhenAsked(request.headers, reply.raw)
    })
    app.setErrorHandler((error: Error, _request, reply) => {
      setup.frameworkErrors.push(error.message)
      return reply.code(500).send()
    })
    app.get('/app/ping', async () => ({ pong: true }))
    app.post('/app/echo', async (request) => ({ echo: request.body }))
    await app.register(schedulingWebhooks, { ...setup.webhooks, prefix: setup.prefix })
    await app.register(schedulingOAuth, { ...setup.oauth, prefix: '/auth/scheduling' })
    await app.listen({ port, host: '127.0.0.1' })
    return { close: () => app.close() }
  },
}

runConformance(harness)
