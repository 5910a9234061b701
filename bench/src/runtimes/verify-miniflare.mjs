// workerd's case of ../runtimes.ts, run on Node 22 (Miniflare needs it): the Worker bundled
// with each build of core (the Web Crypto build as workerd's export condition selects it; the
// node:crypto build with the nodejs_compat flag), `n` verifications per request, timed from
// outside, less the time of a request with none. Prints one line of JSON.
// Arguments: the two bundles' paths (web, node). MINIFLARE_ENTRY: Miniflare's module.
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

const { Miniflare } = await import(pathToFileURL(process.env.MINIFLARE_ENTRY).href)
const [webBundle, nodeBundle] = process.argv.slice(2)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function measure(bundle, flags) {
  const mf = new Miniflare({
    modules: true,
    script: readFileSync(bundle, 'utf8'),
    compatibilityDate: '2026-07-01',
    compatibilityFlags: flags,
  })
  const time = async (size, n, mode) => {
    const start = performance.now()
    const res = await mf.dispatchFetch(`http://bench.test/run?size=${size}&n=${n}&mode=${mode}`)
    if ((await res.text()) !== 'ok') throw new Error(`worker answered ${res.status}`)
    return (performance.now() - start) * 1e6
  }
  const sizes = {}
  try {
    for (const [size, n] of [
      [2048, 400],
      [1024 * 1024, 10],
    ]) {
      for (let i = 0; i < 3; i++) for (const m of ['floor', 'ours']) await time(size, n, m)
      const f = []
      const o = []
      for (let r = 0; r < 15; r++) {
        const empty = await time(size, 0, 'floor')
        f.push((await time(size, n, 'floor')) - empty)
        o.push((await time(size, n, 'ours')) - empty)
      }
      sizes[size] = {
        floorNs: median(f) / n,
        oursNs: median(o) / n,
        ratio: median(o.map((x, i) => x / f[i])),
      }
    }
  } finally {
    await mf.dispose()
  }
  return sizes
}

const web = await measure(webBundle, [])
const node = await measure(nodeBundle, ['nodejs_compat'])
console.log(JSON.stringify({ runtime: 'workerd', web, node }))
