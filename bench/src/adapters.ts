// Requests per second and server CPU per request of a signed webhook through each adapter,
// against the fastest hand-written route on the same framework (./adapters/servers.ts), with
// octokit's and stripe's Express middleware as anchors. Each variant runs in its own child
// process, started once and warmed; the rounds then load them in turn (the order rotating), so
// a busy moment of the machine falls on all of them alike, and each ratio is the median of the
// per-round ratios.
import { type ChildProcess, fork } from 'node:child_process'
import autocannon from 'autocannon'
import { freePort, headersFor, LABEL } from './adapters/client.js'
import { LIMIT, PATH, type Variant } from './adapters/servers.js'
import { median, type Target } from './harness.js'
import { eventBody } from './verify.js'

const FRAMEWORKS = (process.env.BENCH_FRAMEWORKS ?? 'express,koa,fastify,h3').split(',')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const DURATION = Number(process.env.BENCH_SECONDS ?? 2)

interface Server {
  variant: Variant
  port: number
  child: ChildProcess
  headers: Record<string, string>
}

async function start(framework: string, variant: Variant, payload: string): Promise<Server> {
  const port = await freePort()
  const child = fork(
    new URL('./adapters/servers.ts', import.meta.url),
    ['serve', framework, variant, String(port)],
    { execArgv: ['--import', 'tsx'], stdio: 'inherit' },
  )
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve())
    child.once('exit', (code) => reject(new Error(`${framework} ${variant} exited with ${code}`)))
  })
  return { variant, port, child, headers: await headersFor(variant, payload) }
}

interface Run {
  rps: number
  cpuPerRequest: number
}

async function load(
  server: Server,
  payload: string,
  seconds: number,
  connections: number,
  { headers = server.headers, refused = false } = {},
): Promise<Run> {
  server.child.send('mark')
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}${PATH}`,
    method: 'POST',
    headers,
    body: payload,
    connections,
    duration: seconds,
  })
  // Every answer must be the expected kind: 2xx, or (`refused`) 401 for each forged request.
  const wrong = refused ? result.requests.total - result['4xx'] : result.non2xx
  if (wrong > 0 || result.errors > 0 || result.requests.total === 0)
    throw new Error(`${server.variant}: ${wrong} unexpected answers, ${result.errors} errors`)
  const cpu = await new Promise<number>((resolve) => {
    server.child.once('message', (m: { cpuMicros: number }) => resolve(m.cpuMicros))
    server.child.send('cpu')
  })
  return { rps: result.requests.total / seconds, cpuPerRequest: cpu / result.requests.total }
}

/** Median and spread ((p75 - p25) / 2, relative to the median) of per-round ratios. */
function pairedRatio(a: number[], b: number[]): { ratio: number; spread: number } {
  const ratios = a.map((x, i) => x / b[i]!).sort((x, y) => x - y)
  const q = (p: number) => ratios[Math.min(ratios.length - 1, Math.floor(p * ratios.length))]!
  const ratio = median(ratios)
  return { ratio, spread: (q(0.75) - q(0.25)) / 2 / ratio }
}

const pct = (spread: number) => `±${(spread * 100).toFixed(1)}%`

async function compare(
  framework: string,
  size: number,
  variants: Variant[],
  connections: number,
): Promise<Map<Variant, Run[]>> {
  const payload = eventBody(size)
  const servers: Server[] = []
  try {
    for (const v of variants) servers.push(await start(framework, v, payload))
    // Warm every server before the measured rounds.
    for (const s of servers) await load(s, payload, 1, connections)
    const runs = new Map<Variant, Run[]>(variants.map((v) => [v, []]))
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < servers.length; k++) {
        const s = servers[(r + k) % servers.length]!
        runs.get(s.variant)!.push(await load(s, payload, DURATION, connections))
      }
    }
    return runs
  } finally {
    for (const s of servers) s.child.kill()
  }
}

export async function adapterBench(): Promise<Target[]> {
  const targets: Target[] = []
  for (const size of [2048, LIMIT]) {
    const kib = size / 1024
    const connections = size > 65536 ? 8 : 32
    console.log(
      `\nSigned ${kib} KiB webhook (autocannon, ${connections} connections, ${ROUNDS} rounds of ${DURATION} s; ratios: median of per-round ratios, ± half the interquartile range)`,
    )
    console.log(
      '| framework | route | requests/s | vs hand-written | server CPU/request | vs hand-written |',
    )
    console.log('|---|---|---:|---:|---:|---:|')
    for (const framework of FRAMEWORKS) {
      const anchors: Variant[] =
        framework === 'express' && size === 2048 ? ['octokit', 'stripe'] : []
      const runs = await compare(framework, size, ['baseline', 'ours', ...anchors], connections)
      const base = runs.get('baseline')!
      for (const [variant, own] of runs) {
        const rps = pairedRatio(
          own.map((r) => r.rps),
          base.map((r) => r.rps),
        )
        const cpu = pairedRatio(
          own.map((r) => r.cpuPerRequest),
          base.map((r) => r.cpuPerRequest),
        )
        console.log(
          `| ${framework} | ${LABEL[variant]} | ${Math.round(median(own.map((r) => r.rps)))} | ${rps.ratio.toFixed(3)}x ${pct(rps.spread)} | ${median(own.map((r) => r.cpuPerRequest)).toFixed(0)} µs | ${cpu.ratio.toFixed(3)}x ${pct(cpu.spread)} |`,
        )
        if (variant !== 'ours') continue
        if (size === 2048) {
          targets.push(
            {
              what: `${framework}: requests/s, ours / hand-written`,
              ratio: rps.ratio,
              limit: 0.95,
              kind: 'min',
            },
            {
              what: `${framework}: CPU/request, ours / hand-written`,
              ratio: cpu.ratio,
              limit: 1.05,
              kind: 'max',
            },
          )
        } else {
          targets.push({
            what: `${framework}: CPU/request at 1 MiB, ours / hand-written`,
            ratio: cpu.ratio,
            limit: 1.02,
            kind: 'max',
          })
        }
      }
    }
  }
  return targets
}

/**
 * A signature header of the shape whose white-space trim, written as a regular expression,
 * backtracked quadratically: `sha256=`, a run of spaces, one more character. As long as Node's
 * default 16 KiB request head allows.
 */
const HOSTILE_SIGNATURE = `sha256=${' '.repeat(15_000)}x`

/**
 * Server CPU per forged request carrying the hostile signature header, against CPU per valid
 * 2 KiB delivery, through each adapter: what an attacker with no secret can make the server
 * spend, relative to real work. Target: at most 1.5x.
 */
export async function hostileHeaderBench(): Promise<Target[]> {
  const targets: Target[] = []
  const payload = eventBody(2048)
  console.log(
    `\nForged request with a ${HOSTILE_SIGNATURE.length}-character signature header of spaces, against a valid 2 KiB delivery, server CPU per request (autocannon, 32 connections, ${ROUNDS} rounds of ${DURATION} s). The hand-written route refuses the header by its prefix: its ratio is what Node's HTTP parser alone spends on the longer head.`,
  )
  console.log('| framework | route | valid CPU/request | hostile CPU/request | hostile / valid |')
  console.log('|---|---|---:|---:|---:|')
  for (const framework of FRAMEWORKS) {
    for (const variant of ['baseline', 'ours'] as const) {
      const server = await start(framework, variant, payload)
      try {
        const hostile = { ...server.headers, 'x-service-signature': HOSTILE_SIGNATURE }
        const runs = { valid: [] as Run[], hostile: [] as Run[] }
        const once = (kind: 'valid' | 'hostile', seconds: number) =>
          kind === 'valid'
            ? load(server, payload, seconds, 32)
            : load(server, payload, seconds, 32, { headers: hostile, refused: true })
        await once('valid', 1)
        await once('hostile', 1)
        for (let r = 0; r < ROUNDS; r++) {
          const order =
            r % 2 === 0 ? (['valid', 'hostile'] as const) : (['hostile', 'valid'] as const)
          for (const kind of order) runs[kind].push(await once(kind, DURATION))
        }
        const cpu = pairedRatio(
          runs.hostile.map((r) => r.cpuPerRequest),
          runs.valid.map((r) => r.cpuPerRequest),
        )
        console.log(
          `| ${framework} | ${LABEL[variant]} | ${median(runs.valid.map((r) => r.cpuPerRequest)).toFixed(0)} µs | ${median(runs.hostile.map((r) => r.cpuPerRequest)).toFixed(0)} µs | ${cpu.ratio.toFixed(3)}x ${pct(cpu.spread)} |`,
        )
        if (variant !== 'ours') continue
        targets.push({
          what: `${framework}: CPU per forged request with a hostile header / CPU per valid request`,
          ratio: cpu.ratio,
          limit: 1.5,
          kind: 'max',
        })
      } finally {
        server.child.kill()
      }
    }
  }
  return targets
}
