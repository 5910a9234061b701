import { createHmac, timingSafeEqual } from 'node:crypto'
import * as skFastify from '@scheduling-kit/fastify'
import Fastify from 'fastify'

const SECRET = 'whsec_bench_adapters'
const body = JSON.stringify({
  type: 'event.created',
  id: 'payload_x',
  payload: { d: 'x'.repeat(1980) },
})
const sig = 'sha256=' + createHmac('sha256', SECRET).update(body).digest('hex').toUpperCase()
async function make(v: string) {
  const app = Fastify()
  if (v === 'ours')
    await app.register(skFastify.schedulingWebhooks, {
      secret: SECRET,
      dedupe: false,
      onAny: () => {},
    })
  else if (v === 'ours-core-only') {
    const h = skFastify.createWebhookHandler({ secret: SECRET, dedupe: false, onAny: () => {} })
    await app.register(async (s) => {
      s.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_r, b, d) => d(null, b))
      s.post('/webhooks/scheduling', async (req, reply) => {
        const a = (await h.handle({
          method: 'POST',
          path: '/webhooks/scheduling',
          headers: req.headers,
          body: req.body as Buffer,
        }))!
        return reply.code(a.status).headers(a.headers).send(a.body)
      })
    })
  } else
    await app.register(async (s) => {
      s.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_r, b, d) => d(null, b))
      s.post('/webhooks/scheduling', async (req, reply) => {
        const e = createHmac('sha256', SECRET)
          .update(req.body as Buffer)
          .digest()
        const g = Buffer.from((req.headers['x-service-signature'] as string).slice(7), 'hex')
        if (!timingSafeEqual(e, g)) return reply.code(401).send({})
        JSON.parse((req.body as Buffer).toString())
        return reply.code(200).send({ received: true })
      })
    })
  await app.ready()
  return app
}
for (const v of ['baseline', 'ours', 'ours-core-only', 'baseline', 'ours', 'ours-core-only']) {
  const app = await make(v)
  const opts = {
    method: 'POST' as const,
    url: '/webhooks/scheduling',
    headers: { 'content-type': 'application/json', 'x-service-signature': sig },
    payload: body,
  }
  for (let i = 0; i < 2000; i++) await app.inject(opts)
  const t = process.hrtime.bigint()
  const N = 10000
  for (let i = 0; i < N; i++) {
    const r = await app.inject(opts)
    if (r.statusCode !== 200) throw new Error(r.body)
  }
  console.log(v, (Number(process.hrtime.bigint() - t) / N / 1000).toFixed(1), 'us/req')
  await app.close()
}
