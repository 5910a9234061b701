import { Router } from '@koa/router'
import Koa from 'koa'
import { schedulingWebhooks } from './dist/index.js'

const app = new Koa()
const router = new Router({ prefix: '/api' })
const w = schedulingWebhooks('s', { path: '/api/webhooks/scheduling' })
router.all('/webhooks/scheduling', w)
app.use(router.routes())
const s = app.listen(0, async () => {
  const r = await fetch(`http://127.0.0.1:${s.address().port}/api/webhooks/scheduling`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  console.log(r.status, await r.text())
  s.close()
})
