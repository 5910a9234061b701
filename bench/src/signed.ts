import { createHmac } from 'node:crypto'

/** The secret of the benches that sign their own deliveries. */
export const SECRET = 'whsec_bench'

/** A delivery of `body` as `handle()` takes it, signed with `SECRET`. */
export function signedRequest(body: Buffer) {
  const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`
  return {
    method: 'POST',
    path: '/webhooks/scheduling',
    headers: { 'content-type': 'application/json', 'x-service-signature': signature },
    body,
  }
}
