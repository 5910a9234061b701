// Requests per second of a signed 2 KiB webhook through each adapter, against the same framework
// serving a hand-written raw-body + HMAC route. Servers run in child processes; rounds alternate.
import { fork } from 'node:child_process'
import { createServer } from 'node:net'
import { signPayload } from '@scheduling-kit/core'
import autocannon from 'autocannon'
import type { Target } from './harness.js'

const FRAMEWORKS = (process.env.BENCH_FRAMEWORKS ?? 'express,koa,fastify,h3').split(',')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const DURATION = Number(process.env.BENCH_SECONDS ?? 3)

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}

function body2k(): string {
  const event = {
    type: 'event.created',
    id: 'payload_benchadapters',
    version: '2020-11-18',
    payload: { id: 'event_1', state: 'confirmed', description: '' },
  }
  event.payload.description = 'x'.repeat(2048 - JSON.stringify(event).length)
  return JSON.stringify(event)
}

interface Run {
  rps: number
  cpuPerRequest: number
}

async function run(
  framework: string,
  variant: 'ours' | 'baseline',
  body: string,
  signature: string,
): Promise<Run> {
  const port = await freePort()
  const child = fork(
    new URL('./adapters/servers.ts', import.meta.url),
    ['serve', framework, variant, String(port)],
    {
      execArgv: ['--import', 'tsx'],
      stdio: 'inherit',
    },
  )
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve())
    child.once('exit', (code) => reject(new Error(`${framework} ${variant} exited with ${code}`)))
  })
  try {
    child.send('mark')
    const result = await autocannon({
      url: `http://127.0.0.1:${port}/webhooks/scheduling`,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-signature': signature,
        'x-service-webhook-id': 'wh_bench',
      },
      body,
      connections: 32,
      duration: DURATION,
    })
    if (result.non2xx > 0 || result.errors > 0)
      throw new Error(`${framework} ${variant}: ${result.non2xx} non-2xx, ${result.errors} errors`)
    const cpu = await new Promise<number>((resolve) => {
      child.once('message', (m: { cpuMicros: number }) => resolve(m.cpuMicros))
      child.send('cpu')
    })
    return { rps: result.requests.average, cpuPerRequest: cpu / result.requests.total }
  } finally {
    child.kill()
  }
}

export async function adapterBench(): Promise<Target[]> {
  const body = body2k()
  const signature = await signPayload(body, 'whsec_bench_adapters')
  const targets: Target[] = []
  console.log(
    `\nSigned 2 KiB webhook, requests/s (autocannon, 32 connections, ${DURATION} s x ${ROUNDS} rounds, median)`,
  )
  console.log(
    '| framework | hand-written route | scheduling-kit | ratio | server CPU/request, hand-written | scheduling-kit |',
  )
  console.log('|---|---:|---:|---:|---:|---:|')
  for (const framework of FRAMEWORKS) {
    const ours: Run[] = []
    const base: Run[] = []
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate which goes first, so warm-up and drift fall on both.
      if (r % 2 === 0) {
        base.push(await run(framework, 'baseline', body, signature))
        ours.push(await run(framework, 'ours', body, signature))
      } else {
        ours.push(await run(framework, 'ours', body, signature))
        base.push(await run(framework, 'baseline', body, signature))
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    const ratio = median(ours.map((o, i) => o.rps / base[i]!.rps))
    const rps = (runs: Run[]) => Math.round(median(runs.map((r) => r.rps)))
    const cpu = (runs: Run[]) => `${median(runs.map((r) => r.cpuPerRequest)).toFixed(0)} µs`
    console.log(
      `| ${framework} | ${rps(base)} | ${rps(ours)} | ${ratio.toFixed(3)}x | ${cpu(base)} | ${cpu(ours)} |`,
    )
    targets.push({
      what: `${framework}: requests/s, ours / hand-written`,
      ratio,
      limit: 0.9,
      kind: 'min',
    })
  }
  return targets
}
