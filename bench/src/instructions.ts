// Instructions per request under `valgrind --tool=callgrind`: the repeatable measure beside
// requests/s and CPU. Each server (./adapters/servers.ts) runs under callgrind with
// instrumentation off while it starts and warms; then `callgrind_control` turns it on, one
// keep-alive connection sends the measured requests one after another, and a dump after each
// window gives the main thread's instruction count. Node runs with `--single-threaded`: the
// garbage collector's and the compiler's work then happens on the main thread, counted, rather
// than shared with helper threads in proportions that depend on the machine's load. What is
// counted is every instruction a request costs the process, and the same code gives the same
// mean within about 1% from run to run, loaded or not.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, headersFor, LABEL } from './adapters/client.js'
import { LIMIT, PATH, type Variant } from './adapters/servers.js'
import type { Target } from './harness.js'
import { eventBody } from './verify.js'

/** Whether callgrind can run here: `valgrind` and `callgrind_control` on the PATH. */
export function haveCallgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' })
    execFileSync('callgrind_control', ['-h'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Sends `count` requests one after another on one keep-alive connection; each must be 2xx. */
async function send(
  port: number,
  headers: Record<string, string>,
  body: string,
  count: number,
): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const all = { ...headers, 'content-length': String(Buffer.byteLength(body)) }
  try {
    for (let i = 0; i < count; i++) {
      await new Promise<void>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port, path: PATH, method: 'POST', headers: all, agent },
          (res) => {
            res.resume()
            res.on('end', () =>
              res.statusCode! < 300
                ? resolve()
                : reject(new Error(`answered ${res.statusCode} under callgrind`)),
            )
          },
        )
        req.on('error', reject)
        req.end(body)
      })
    }
  } finally {
    agent.destroy()
  }
}

function control(pid: number, ...args: string[]): void {
  execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' })
}

/** The main thread's instruction count in callgrind's dump number `n` (`<out>.<n>-01`). */
function mainThreadInstructions(dir: string, n: number): number {
  const file = join(dir, `out.${n}-01`)
  const totals = /^(?:totals|summary): (\d+)/m.exec(readFileSync(file, 'utf8'))
  if (!totals) throw new Error(`no totals in ${file}`)
  return Number(totals[1])
}

function waitReady(child: ChildProcess, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('ready')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code} under callgrind`)))
  })
}

/**
 * Instructions per request of one variant on one framework: the main thread's count over
 * `count` requests of `payload`, after `warm` requests with instrumentation off.
 */
export async function instructionsPerRequest(
  framework: string,
  variant: Variant,
  payload: string,
  {
    warm,
    count,
    windows = 5,
    env,
  }: { warm: number; count: number; windows?: number; env?: Record<string, string> },
): Promise<number> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'sk-callgrind-'))
  const server = fileURLToPath(new URL('./adapters/servers.ts', import.meta.url))
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--separate-threads=yes',
      `--callgrind-out-file=${join(dir, 'out')}`,
      process.execPath,
      ...(process.env.BENCH_NODE_FLAGS ?? '--single-threaded').split(' ').filter(Boolean),
      '--import',
      'tsx',
      server,
      'serve',
      framework,
      variant,
      String(port),
    ],
    { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, ...env } },
  )
  const what = `${framework} ${variant}`
  try {
    await waitReady(child, what)
    const headers = await headersFor(variant, payload)
    await send(port, headers, payload, warm)
    control(child.pid!, '--instr=on')
    const perWindow: number[] = []
    for (let n = 1; n <= windows; n++) {
      control(child.pid!, '--zero')
      await send(port, headers, payload, count)
      control(child.pid!, '--dump')
      perWindow.push(mainThreadInstructions(dir, n) / count)
    }
    if (process.env.BENCH_CALLGRIND_WINDOWS) console.log(what, perWindow.map(Math.round).join(' '))
    // The mean over all windows: a collection falls in some windows and not in others.
    return perWindow.reduce((a, b) => a + b, 0) / perWindow.length
  } finally {
    child.kill('SIGKILL')
    if (process.env.BENCH_KEEP_CALLGRIND) console.log(`callgrind dumps kept in ${dir}`)
    else rmSync(dir, { recursive: true, force: true })
  }
}

const FRAMEWORKS = (process.env.BENCH_FRAMEWORKS ?? 'express,koa,fastify,h3').split(',')
/** Servers counted at once: counts do not depend on load, so both cores can work. */
const PARALLEL = Number(process.env.BENCH_CALLGRIND_PARALLEL ?? 2)

/** Runs `jobs` at most `parallel` at a time, keeping their order in the results. */
async function pool<T>(jobs: (() => Promise<T>)[], parallel: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length)
  let next = 0
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++
      results[i] = await jobs[i]!()
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallel, jobs.length) }, worker))
  return results
}

/**
 * Instructions per request of each adapter against the hand-written route on its framework
 * (and octokit's and stripe's Express middleware at 2 KiB), at 2 KiB and 1 MiB. Target: each
 * adapter at most 1.02x its route. Skipped, saying so, where valgrind is missing.
 */
export async function instructionsBench(): Promise<Target[]> {
  if (!haveCallgrind()) {
    console.log('\nInstructions per request: skipped, valgrind (callgrind) is not installed.')
    return []
  }
  const targets: Target[] = []
  for (const size of [2048, LIMIT]) {
    const payload = eventBody(size)
    const plan =
      size === 2048 ? { warm: 4000, count: 400, windows: 5 } : { warm: 300, count: 20, windows: 5 }
    const runs: { framework: string; variant: Variant }[] = []
    for (const framework of FRAMEWORKS) {
      const anchors: Variant[] =
        framework === 'express' && size === 2048 ? ['octokit', 'stripe'] : []
      for (const variant of ['baseline', 'ours', ...anchors] as Variant[])
        runs.push({ framework, variant })
    }
    const counts = await pool(
      runs.map(
        ({ framework, variant }) =>
          () =>
            instructionsPerRequest(framework, variant, payload, plan),
      ),
      PARALLEL,
    )
    console.log(
      `\nInstructions per request, signed ${size / 1024} KiB webhook (callgrind, node --single-threaded, main thread, after ${plan.warm} warm requests; mean of ${plan.windows} windows of ${plan.count} requests on one keep-alive connection)`,
    )
    console.log('| framework | route | instructions/request | vs hand-written |')
    console.log('|---|---|---:|---:|')
    for (const framework of FRAMEWORKS) {
      const base =
        counts[runs.findIndex((r) => r.framework === framework && r.variant === 'baseline')]!
      runs.forEach((r, i) => {
        if (r.framework !== framework) return
        const ratio = counts[i]! / base
        console.log(
          `| ${framework} | ${LABEL[r.variant]} | ${Math.round(counts[i]!).toLocaleString('en-US')} | ${ratio.toFixed(3)}x |`,
        )
        if (r.variant === 'ours')
          targets.push({
            what: `${framework}: instructions/request at ${size / 1024} KiB, ours / hand-written`,
            ratio,
            limit: 1.02,
            kind: 'max',
          })
      })
    }
  }
  return targets
}
