import { spawnSync } from 'node:child_process'
import type { Target } from './harness.js'

/**
 * How long a killed worker's job takes to run again on the other worker, per queue with its
 * defaults (the PostgreSQL queue alone and with the ledger; BullMQ), over BENCH_RERUN_TRIALS
 * trials (default 3) in a child process: the median and the spread (min to max) printed,
 * the slowest held to the READMEs' 20 s.
 */
export async function rerunBench(): Promise<Target[]> {
  const child = spawnSync(
    process.execPath,
    ['--import', 'tsx', new URL('./rerun/trials.ts', import.meta.url).pathname],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  if (child.status !== 0) throw new Error(`the re-run bench failed (${child.status})`)
  const times = JSON.parse(child.stdout.trim().split('\n').pop()!) as Record<string, number[]>
  console.log('\nA killed worker: its job run again by the other worker, from the kill (s)')
  console.log('| queue | trials | median | min | max |')
  console.log('|---|---:|---:|---:|---:|')
  const s = (ms: number) => (ms / 1000).toFixed(1)
  const results: Target[] = []
  for (const [queue, runs] of Object.entries(times)) {
    const sorted = [...runs].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)]!
    console.log(
      `| ${queue} | ${runs.length} | ${s(median)} | ${s(sorted[0]!)} | ${s(sorted.at(-1)!)} |`,
    )
    results.push({
      what: `${queue}: a killed worker's job runs again (slowest of ${runs.length})`,
      ratio: sorted.at(-1)! / 1000,
      limit: 20,
      kind: 'max',
      unit: ' s',
    })
  }
  return results
}
