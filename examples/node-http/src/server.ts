import { createApp } from './app.js'

const secret = process.env.SCHEDULING_SECRET
if (!secret) {
  console.error('Set SCHEDULING_SECRET to the webhook signing secret (see .env.example).')
  process.exit(1)
}
const port = Number(process.env.PORT ?? 3000)
const { server } = createApp({ secret, log: console.log })
server.listen(port, () => {
  console.log(`Listening on http://localhost:${port}; webhooks at POST /webhooks/scheduling`)
})
