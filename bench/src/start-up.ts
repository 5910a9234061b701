// Start-up by concern: the instructions Node runs to import an entry point, over an empty
// `node`, against @octokit/webhooks in the same run. Each import runs in its own process under
// callgrind, whole (no window), with `--single-threaded --hash-seed=1 --random-seed=1`: the
// collector's and compiler's work on the main thread, the same hash layout every run, so the
// count repeats (measured: the three processes of a case agree within 0.001%; without the seeds
// a case varied by up to 16 M between runs). The spread printed is that of the processes.
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { median, type Target } from './harness.js'
import { haveCallgrind } from './instructions.js'

const execFileAsync = promisify(execFile)

const here = fileURLToPath(new URL('..', import.meta.url))
const PROCESSES = Number(
  process.env.BENCH_STARTUP_PROCESSES ?? process.env.BENCH_CALLGRIND_PROCESSES ?? 3,
)

/**
 * The imports measured: a label, the specifier, and the framework the app has loaded already.
 * Each is compared with @octokit/webhooks imported in the same setting: alone, or after the
 * same framework (which may have loaded `node:crypto` or the like for both).
 */
const IMPORTS: {
  label: string
  specifier: string
  after?: string
  also?: string[]
  limit?: number
}[] = [
  { label: '@scheduling-kit/core/webhooks', specifier: '@scheduling-kit/core/webhooks' },
  // What a serverless route of the Next.js example loads at its start: its handler's entry and
  // the app's one module (`lazyScheduling`, whose options function imports the PostgreSQL
  // stores and pg at the first delivery). Then what that first delivery has loaded: the setup
  // layer, the stores, pg (all of it at start, before `core/lazy`: 2.534x).
  { label: '@scheduling-kit/core/setup', specifier: '@scheduling-kit/core/setup', limit: 2 },
  {
    label: 'the Next.js webhook route at its start (core/webhooks, core/lazy)',
    specifier: '@scheduling-kit/core/webhooks',
    also: ['@scheduling-kit/core/lazy'],
    limit: 1.3,
  },
  {
    label: 'the same route after its first delivery (+ core/setup, postgres, pg)',
    specifier: '@scheduling-kit/core/webhooks',
    also: [
      '@scheduling-kit/core/lazy',
      '@scheduling-kit/core/setup',
      '@scheduling-kit/postgres',
      'pg',
    ],
    limit: 2.7,
  },
  ...['express', 'koa', 'fastify'].flatMap((framework) => [
    {
      label: `@scheduling-kit/${framework}/webhooks`,
      specifier: `@scheduling-kit/${framework}/webhooks`,
    },
    { label: `@scheduling-kit/${framework}`, specifier: `@scheduling-kit/${framework}` },
  ]),
  ...['express', 'koa', 'fastify', 'h3'].flatMap((framework) => [
    {
      label: `@scheduling-kit/${framework}/webhooks`,
      specifier: `@scheduling-kit/${framework}/webhooks`,
      after: framework,
    },
    {
      label: `@scheduling-kit/${framework}`,
      specifier: `@scheduling-kit/${framework}`,
      after: framework,
    },
  ]),
]
const ANCHOR = '@octokit/webhooks'

/** Callgrind runs at once: counts do not depend on load, so both cores can work. */
const PARALLEL = Number(process.env.BENCH_CALLGRIND_PARALLEL ?? 2)
let scripts = 0

/** Instructions of one process that imports `specifiers` in order and exits. */
async function count(...specifiers: string[]): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'start-up-'))
  try {
    // Under node_modules (resolution from there finds the bench's packages), never in the tree.
    const script = join(here, 'node_modules', `.start-up-${process.pid}-${++scripts}.mjs`)
    writeFileSync(script, specifiers.map((s) => `await import(${JSON.stringify(s)})\n`).join(''))
    try {
      await execFileAsync(
        'valgrind',
        [
          '--tool=callgrind',
          `--callgrind-out-file=${join(dir, 'out')}`,
          process.execPath,
          '--single-threaded',
          '--hash-seed=1',
          '--random-seed=1',
          script,
        ],
        { cwd: here, maxBuffer: 64 * 1024 * 1024 },
      )
    } finally {
      rmSync(script, { force: true })
    }
    const totals = /^(?:totals|summary): (\d+)/m.exec(readFileSync(join(dir, 'out'), 'utf8'))
    if (!totals) throw new Error(`no totals for ${specifiers.join(', ')}`)
    return Number(totals[1])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export async function startUpBench(): Promise<Target[]> {
  if (!haveCallgrind()) {
    console.log('\nStart-up in instructions: skipped, valgrind (callgrind) is not installed.')
    return []
  }
  const runs = new Map<string, number[]>()
  const add = (key: string, value: number) => {
    runs.set(key, [...(runs.get(key) ?? []), value])
  }
  const settings = ['', ...new Set(IMPORTS.flatMap(({ after }) => (after ? [after] : [])))]
  const key = (label: string, after = '') => `${label} ${after}`
  // Processes interleaved: whatever drifts falls on every import alike. PARALLEL at a time.
  const jobs: (() => Promise<void>)[] = []
  for (let p = 0; p < PROCESSES; p++) {
    for (const after of settings) {
      const first = after ? [after] : []
      jobs.push(async () => add(key('', after), await count(...first)))
      jobs.push(async () => add(key(ANCHOR, after), await count(...first, ANCHOR)))
    }
    for (const { label, specifier, after, also = [] } of IMPORTS)
      jobs.push(async () =>
        add(key(label, after), await count(...(after ? [after] : []), specifier, ...also)),
      )
  }
  let next = 0
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]!()
  }
  await Promise.all(Array.from({ length: PARALLEL }, worker))
  const over = (label: string, after = '') =>
    median(runs.get(key(label, after))!) - median(runs.get(key('', after))!)
  console.log(
    `\nStart-up: instructions to import, over Node alone (${(median(runs.get(key(''))!) / 1e6).toFixed(1)} M) or Node with the framework imported, against @octokit/webhooks imported the same way; ${PROCESSES} processes each`,
  )
  console.log('| import | setting | instructions | spread | @octokit/webhooks | ratio |')
  console.log('|---|---|---:|---:|---:|---:|')
  const rows: Target[] = []
  for (const { label, after, limit: given } of IMPORTS) {
    const values = runs.get(key(label, after))!
    const spread = (Math.max(...values) - Math.min(...values)) / 2 / over(label, after)
    const ratio = over(label, after) / over(ANCHOR, after)
    console.log(
      `| ${label} | ${after ? `after ${after}` : 'alone'} | ${(over(label, after) / 1e6).toFixed(1)} M | ±${(spread * 100).toFixed(2)}% | ${(over(ANCHOR, after) / 1e6).toFixed(1)} M | ${ratio.toFixed(3)}x |`,
    )
    // What receives webhooks only, against a whole adapter (OAuth, stores, the ledger).
    const limit = given ?? (label.endsWith('/webhooks') ? 1.2 : 2)
    rows.push({
      what: `start-up: import('${label}') ${after ? `after ${after}` : 'alone'}, instructions / @octokit/webhooks's`,
      ratio,
      limit,
      kind: 'max',
    })
  }
  return rows
}
