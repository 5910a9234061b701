// Instructions per request under `valgrind --tool=callgrind`: the repeatable measure beside
// requests/s and CPU. Each server (./adapters/servers.ts) runs under callgrind with
// instrumentation off while it starts and warms; then `callgrind_control` turns it on, one
// keep-alive connection sends the measured requests one after another, and a dump after each
// window gives the main thread's instruction count. Node runs with `--single-threaded`: the
// garbage collector's and the compiler's work then happens on the main thread, counted, rather
// than shared with helper threads in proportions that depend on the machine's load. What is
// counted is every instruction a request costs the process.
//
// Resolution, as measured: a window's count is not fixed. A collection or a compilation falls in
// some windows and not others, and on a loaded machine the windows of one server process varied
// from 8% to 185% over the smallest, and the mean of five windows moved by up to 0.13 in ratio
// between two passes. So each variant runs in several processes (BENCH_CALLGRIND_PROCESSES,
// default 3), each process's estimate is its smallest window (the request's own work with the
// least collection in it: the estimator that load moves least), the figure is the median of those
// minimums, and every table prints the spread of the minimums across processes: a ratio closer
// to 1 than that spread is not resolved by this harness.
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

/**
 * Valgrind's arguments for a Node script under callgrind, counting off until `callgrind_control`
 * turns it on, dumps in `dir/out`, Node with BENCH_NODE_FLAGS or `nodeFlags`.
 */
export function callgrindArgs(dir: string, nodeFlags: string, script: string[]): string[] {
  return [
    '--tool=callgrind',
    '--instr-atstart=no',
    '--separate-threads=yes',
    `--callgrind-out-file=${join(dir, 'out')}`,
    process.execPath,
    ...(process.env.BENCH_NODE_FLAGS ?? nodeFlags).split(' ').filter(Boolean),
    '--import',
    'tsx',
    ...script,
  ]
}

/** Tells the callgrind of process `pid` what to do (`--instr=on`, `--zero`, `--dump`). */
export function control(pid: number, ...args: string[]): void {
  execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' })
}

/** The main thread's instruction count in callgrind's dump number `n` (`<out>.<n>-01`). */
export function mainThreadInstructions(dir: string, n: number): number {
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

/** What one variant costs: the figure, and how much it moved. */
export interface InstructionCount {
  /** Instructions per request: the median over processes of each process's smallest window. */
  perRequest: number
  /** Each process's smallest window. */
  processes: number[]
  /** (largest - smallest) / median of `processes`: the harness's resolution for this variant. */
  processSpread: number
  /** Largest window over smallest window, over every window of every process, less 1. */
  windowSpread: number
}

interface Plan {
  warm: number
  count: number
  windows?: number
  env?: Record<string, string>
  /** Server processes counted, one after another. Default BENCH_CALLGRIND_PROCESSES or 3. */
  processes?: number
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** A spread as printed: `±x.x%` of the figure, half the range. */
export const spreadText = (count: InstructionCount) =>
  `±${((count.processSpread / 2) * 100).toFixed(1)}% (${count.processes.length} processes; windows up to +${(count.windowSpread * 100).toFixed(0)}%)`

/**
 * Instructions per request of one variant on one framework, over several server processes: see
 * the resolution note at the top of this file.
 */
export async function instructionsPerRequest(
  framework: string,
  variant: Variant,
  payload: string,
  plan: Plan,
): Promise<InstructionCount> {
  const n = plan.processes ?? Number(process.env.BENCH_CALLGRIND_PROCESSES ?? 3)
  const all: number[][] = []
  for (let i = 0; i < n; i++) all.push(await countWindows(framework, variant, payload, plan))
  const processes = all.map((windows) => Math.min(...windows))
  const flat = all.flat()
  const perRequest = median(processes)
  return {
    perRequest,
    processes,
    processSpread: (Math.max(...processes) - Math.min(...processes)) / perRequest,
    windowSpread: Math.max(...flat) / Math.min(...flat) - 1,
  }
}

/**
 * One server process: the main thread's count per request in each of `windows` windows of
 * `count` requests of `payload`, after `warm` requests with instrumentation off.
 */
async function countWindows(
  framework: string,
  variant: Variant,
  payload: string,
  { warm, count, windows = 5, env }: Plan,
): Promise<number[]> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'sk-callgrind-'))
  const server = fileURLToPath(new URL('./adapters/servers.ts', import.meta.url))
  const child = spawn(
    'valgrind',
    callgrindArgs(dir, '--single-threaded', [server, 'serve', framework, variant, String(port)]),
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
    return perWindow
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
  // BENCH_INSTRUCTION_SIZES=2048 counts the 2 KiB case alone.
  const sizes = (process.env.BENCH_INSTRUCTION_SIZES ?? `2048,${LIMIT}`).split(',').map(Number)
  for (const size of sizes) {
    const payload = eventBody(size)
    const plan =
      size === 2048
        ? {
            // --quick (quick.ts) counts after fewer warm requests, in fewer, shorter windows.
            warm: Number(process.env.BENCH_INSTRUCTION_WARM ?? 4000),
            count: Number(process.env.BENCH_INSTRUCTION_COUNT ?? 400),
            windows: Number(process.env.BENCH_INSTRUCTION_WINDOWS ?? 5),
          }
        : { warm: 300, count: 20, windows: 5 }
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
      `\nInstructions per request, signed ${size / 1024} KiB webhook (callgrind, node --single-threaded, main thread, after ${plan.warm} warm requests; ${plan.windows} windows of ${plan.count} requests on one keep-alive connection per process; median over processes of each one's smallest window)`,
    )
    console.log('| framework | route | instructions/request | spread | vs hand-written |')
    console.log('|---|---|---:|---|---:|')
    for (const framework of FRAMEWORKS) {
      const base =
        counts[runs.findIndex((r) => r.framework === framework && r.variant === 'baseline')]!
          .perRequest
      runs.forEach((r, i) => {
        if (r.framework !== framework) return
        const ratio = counts[i]!.perRequest / base
        console.log(
          `| ${framework} | ${LABEL[r.variant]} | ${Math.round(counts[i]!.perRequest).toLocaleString('en-US')} | ${spreadText(counts[i]!)} | ${ratio.toFixed(3)}x |`,
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
