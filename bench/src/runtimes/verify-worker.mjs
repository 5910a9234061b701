// The Worker of ../runtimes.ts's workerd case, bundled by esbuild with one build of core
// (`CORE` is aliased to it): `GET /run?size=&n=&mode=` verifies a signed body of `size` bytes
// `n` times with core's verifySignature (`mode=ours`) or by hand with Web Crypto and a cached
// key (`mode=floor`), then answers. Time is measured outside: inside workerd the clock stands
// still while a request computes.
import { verifySignature } from 'CORE'

const SECRET = 'whsec_runtimes_bench'
const enc = new TextEncoder()
const bodies = new Map()
let key

function hex(bytes) {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

async function signed(size) {
  let found = bodies.get(size)
  if (found === undefined) {
    const head = '{"type":"event.created","id":"payload_bench","note":"'
    const data = enc.encode(`${head}${'x'.repeat(size - head.length - 2)}"}`)
    key ??= await crypto.subtle.importKey(
      'raw',
      enc.encode(SECRET),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign', 'verify'],
    )
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, data))
    found = { data, mac, header: `sha256=${hex(mac)}` }
    bodies.set(size, found)
  }
  return found
}

export default {
  async fetch(request) {
    const url = new URL(request.url)
    const size = Number(url.searchParams.get('size'))
    const n = Number(url.searchParams.get('n'))
    const { data, mac, header } = await signed(size)
    for (let i = 0; i < n; i++) {
      const ok =
        url.searchParams.get('mode') === 'floor'
          ? await crypto.subtle.verify('HMAC', key, mac, data)
          : await verifySignature(data, header, SECRET)
      if (!ok) return new Response('refused', { status: 500 })
    }
    return new Response('ok')
  },
}
