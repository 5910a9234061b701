// Run by each runtime (Node, Bun, Deno) from ../runtimes.ts: core's verifySignature, from the
// build given by path, against the floor on the same runtime (node:crypto's createHmac and
// timingSafeEqual by hand, awaited like ours), at 2 KiB and 1 MiB, in interleaved rounds.
// Prints one line of JSON: per size, the median ns/op of each and the median per-round ratio.
// Arguments: the core entry's file URL.
import { Buffer } from 'node:buffer'
import { createHmac, timingSafeEqual } from 'node:crypto'

const [entry] = globalThis.Deno?.args ?? globalThis.process.argv.slice(2)
const { verifySignature } = await import(entry)

const SECRET = 'whsec_runtimes_bench'
const enc = new TextEncoder()
const now = () => performance.now() * 1e6

function body(size) {
  const head = '{"type":"event.created","id":"payload_bench","note":"'
  return enc.encode(`${head}${'x'.repeat(size - head.length - 2)}"}`)
}

async function batch(run, n) {
  const start = now()
  for (let i = 0; i < n; i++) await run()
  return (now() - start) / n
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const out = { runtime: globalThis.Deno ? 'deno' : globalThis.Bun ? 'bun' : 'node', sizes: {} }
for (const size of [2048, 1024 * 1024]) {
  const data = body(size)
  const header = `sha256=${createHmac('sha256', SECRET).update(data).digest('hex')}`
  // The floor of ../verify.ts: the header decoded and compared on every call.
  const floor = async () => {
    const mac = createHmac('sha256', SECRET).update(data).digest()
    const given = Buffer.from(header.slice(7), 'hex')
    if (given.length !== mac.length || !timingSafeEqual(mac, given))
      throw new Error('floor refused')
  }
  const ours = async () => {
    if (!(await verifySignature(data, header, SECRET))) throw new Error('core refused')
  }
  await ours()
  // Batch size: about 20 ms of the floor.
  let n = 4
  while ((await batch(floor, n)) * n < 20e6 && n < 1 << 20) n *= 2
  for (let i = 0; i < 3; i++) await batch(ours, n) // warm
  const f = []
  const o = []
  for (let r = 0; r < 15; r++) {
    if (r % 2 === 0) {
      f.push(await batch(floor, n))
      o.push(await batch(ours, n))
    } else {
      o.push(await batch(ours, n))
      f.push(await batch(floor, n))
    }
  }
  out.sizes[size] = {
    floorNs: median(f),
    oursNs: median(o),
    ratio: median(o.map((x, i) => x / f[i])),
  }
}
console.log(JSON.stringify(out))
