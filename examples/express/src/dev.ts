// pnpm dev: the fake scheduling service (with its consent page) and this app, kept running for
// a person to click through. Stop with Ctrl-C.
import { startStack } from './stack.js'

const stack = await startStack({
  appPort: Number(process.env.PORT ?? 3000),
  servicePort: Number(process.env.SERVICE_PORT ?? 4010),
})
console.log(`Example app:            ${stack.appUrl}   (Connect, then watch events arrive)`)
console.log(`Fake scheduling service: ${stack.service.url}   (trigger events from its dashboard)`)
console.log(
  `Delivery page:          ${stack.appUrl}/admin/deliveries   (with the cookie example_admin=${stack.adminToken})`,
)
await new Promise<void>((resolve) => {
  process.once('SIGINT', resolve)
  process.once('SIGTERM', resolve)
})
await stack.close()
