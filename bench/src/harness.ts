import { fork } from 'node:child_process'
import { hrtime } from 'node:process'
import { fileURLToPath } from 'node:url'

export interface Case {
  name: string
  /** One operation. Return a promise to have it awaited. */
  run: () => unknown
  /** Awaits each call (async code); sync code is timed without an await. */
  async?: boolean
  /** Runs before each of the case's batches, untimed: what the case needs set up globally. */
  before?: () => void
}

export interface Measured {
  name: string
  /** Per-round time of each case, in round order (paired with the other cases' rounds). */
  rounds: number[]
  /** Median nanoseconds per operation over all rounds. */
  nsPerOp: number
  /** Relative spread: (p75 - p25) / median of the rounds. */
  spread: number
}

async function batch(c: Case, n: number): Promise<number> {
  c.before?.()
  const start = hrtime.bigint()
  if (c.async) for (let i = 0; i < n; i++) await c.run()
  else for (let i = 0; i < n; i++) c.run()
  return Number(hrtime.bigint() - start) / n
}

export function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}

/** The median of a list (the upper one of an even count). */
export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  )
}

/**
 * Times the cases in interleaved rounds (each round runs every case once, in a rotated order)
 * so that drift in machine load falls on all of them alike, then takes the median per case.
 */
export async function measure(
  cases: Case[],
  options: { rounds?: number; batchMs?: number } = {},
): Promise<Measured[]> {
  // `--quick` (quick.ts): a third of the rounds, at least 7, and batches half as long.
  const quick = process.env.BENCH_QUICK === '1'
  const rounds = quick ? Math.max(7, Math.ceil((options.rounds ?? 21) / 3)) : (options.rounds ?? 21)
  const batchMs = quick ? (options.batchMs ?? 25) / 2 : (options.batchMs ?? 25)
  const sizes = new Map<Case, number>()
  for (const c of cases) {
    let n = 16
    for (;;) {
      const ns = (await batch(c, n)) * n
      if (ns > batchMs * 1e6 * 0.5 || n > 1 << 24) break
      n *= 2
    }
    sizes.set(c, n)
  }
  const samples = new Map<Case, number[]>(cases.map((c) => [c, []]))
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(r + k) % cases.length]!
      samples.get(c)!.push(await batch(c, sizes.get(c)!))
    }
  }
  return cases.map((c) => {
    const s = [...samples.get(c)!].sort((a, b) => a - b)
    const median = quantile(s, 0.5)
    return {
      name: c.name,
      rounds: samples.get(c)!,
      nsPerOp: median,
      spread: (quantile(s, 0.75) - quantile(s, 0.25)) / median,
    }
  })
}

/**
 * The ratio of two cases as the median of their per-round ratios: each round timed both back
 * to back, so a slow moment of the machine weighs on both sides of the ratio.
 */
export function ratio(results: Measured[], numerator: string, denominator: string): number {
  const a = results.find((r) => r.name === numerator)!.rounds
  const b = results.find((r) => r.name === denominator)!.rounds
  return quantile(
    a.map((x, i) => x / b[i]!).sort((x, y) => x - y),
    0.5,
  )
}

/** One table row: the case, its time and rate, its ratio to the baseline, its spread. */
export function row(r: Measured, vsBaseline: number): void {
  console.log(
    `| ${r.name} | ${r.nsPerOp.toFixed(0)} | ${Math.round(1e9 / r.nsPerOp).toLocaleString('en-US')} | ${vsBaseline.toFixed(3)}x | ±${(r.spread * 50).toFixed(1)}% |`,
  )
}

export function table(title: string, results: Measured[], baseline: string): void {
  console.log(`\n${title}`)
  console.log(`| case | ns/op | ops/s | vs ${baseline} | spread |`)
  console.log('|---|---:|---:|---:|---:|')
  for (const r of results) row(r, ratio(results, r.name, baseline))
}

export interface Target {
  what: string
  ratio: number
  /** The ratio must be at most this (`max`) or at least this (`min`). */
  limit: number
  kind: 'max' | 'min'
  /** What `ratio` and `limit` are in: `x` (a ratio, the default) or a unit such as ` µs`. */
  unit?: string
}

/** Prints the targets and returns whether all were met. */
export function targets(list: Target[]): boolean {
  console.log('\n| target | measured | limit | met |')
  console.log('|---|---:|---:|---|')
  let ok = true
  for (const t of list) {
    const met = t.kind === 'max' ? t.ratio <= t.limit : t.ratio >= t.limit
    ok &&= met
    console.log(
      `| ${t.what} | ${Number.isInteger(t.ratio) ? t.ratio : t.ratio.toFixed(3)}${t.unit ?? 'x'} | ${t.kind === 'max' ? '<=' : '>='} ${t.limit}${t.unit ?? 'x'} | ${met ? 'yes' : 'NO'} |`,
    )
  }
  return ok
}

/**
 * Runs `measureHere()` of a bench module in a process of its own (the module calls
 * `answerParent` when started with `args`): V8 then optimizes for what that group alone sees,
 * as in a server, and one group's garbage or big heap stays out of the others' rounds.
 */
export function measureInChild(moduleUrl: string, args: string[]): Promise<Measured[]> {
  const child = fork(fileURLToPath(moduleUrl), args, {
    execArgv: ['--import', 'tsx'],
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  })
  return new Promise((resolve, reject) => {
    child.once('message', (results) => resolve(results as Measured[]))
    child.once('exit', (code) =>
      reject(new Error(`bench child ${args.join(' ')} exited with ${code}`)),
    )
  })
}

/** In a child started by `measureInChild`: sends the results and exits. */
export function answerParent(results: Measured[]): void {
  process.send!(results, () => process.exit(0))
}

/** What one case adds to another per operation, in µs: the median of per-round differences. */
export function addedMicros(results: Measured[], withIt: string, without: string): number {
  const a = results.find((r) => r.name === withIt)!.rounds
  const b = results.find((r) => r.name === without)!.rounds
  return median(a.map((x, i) => x - b[i]!)) / 1_000
}
