// Runs every package's tests through turbo, then prints one closing line for all of them:
// "tests: N passed, N failed" (", N skipped" when any were), from each package's JSON report.
import './require-node.mjs'
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { ensureServices } from './services.mjs'

const root = new URL('..', import.meta.url).pathname
const reports = ['packages', 'examples', 'internal', 'bench'].flatMap((dir) => {
  const full = join(root, dir)
  if (!existsSync(full)) return []
  if (existsSync(join(full, 'package.json'))) return [join(full, 'test-output', 'vitest.json')]
  return readdirSync(full).map((name) => join(full, name, 'test-output', 'vitest.json'))
})
// The sweep's scale case runs once more, alone, at 100,000 accounts (below): its own report.
const SCALE_REPORT = join(root, 'packages/postgres/test-output/scale.json')
reports.push(SCALE_REPORT)
for (const report of reports) rmSync(report, { force: true })

// The browser test needs Debian's Chromium: installed here when missing (CI and fresh machines).
// If that cannot be done, every other test still runs; the browser test then fails saying why.
const chromium = spawnSync('bash', [join(root, 'scripts/ensure-chromium.sh')], { stdio: 'inherit' })
if (chromium.status !== 0)
  console.warn('Chromium could not be installed: the browser test will fail.')

// Redis and PostgreSQL: the running ones, or servers of our own, stopped at the end.
const services = await ensureServices()
const turbo = (args, env = {}) =>
  spawnSync('pnpm', ['exec', 'turbo', 'run', 'test', '--continue', ...args], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...services.env, ...env },
  }).status ?? 1
// The runtime matrix (internal/runtimes) runs after the other suites, not beside them: it starts
// six runtimes one after another, and on a 2-core machine its load beside them pushed the
// others' heaviest tests (the type-checker reads of the exports tests) past their time-outs.
// Arguments (a --filter, say) go to a single run.
const MATRIX = '@scheduling-kit/runtimes'
const args = process.argv.slice(2)
// Last, alone: the sweep's scale case at 100,000 accounts (three processes and the fake service
// take both cores for about a minute; beside the other suites it stretched them past their
// time-outs, so the parallel run leaves it out and runs the sweep's race case alone).
const scale = () =>
  spawnSync(
    'pnpm',
    [
      ...['--filter', '@scheduling-kit/postgres', 'exec', 'vitest', 'run'],
      'test/sweep-processes.test.ts',
    ],
    {
      cwd: root,
      stdio: 'inherit',
      env: {
        ...process.env,
        ...services.env,
        SWEEP_SCALE_ACCOUNTS: '100000',
        SWEEP_CASES: 'scale',
        VITEST_REPORT: SCALE_REPORT,
      },
    },
  ).status ?? 1
// The parallel run leaves the scale case out (SWEEP_CASES=race): it runs once, at full size.
const statuses =
  args.length > 0
    ? [turbo(args)]
    : [
        turbo([`--filter=!${MATRIX}`], { SWEEP_CASES: 'race' }),
        turbo([`--filter=${MATRIX}`]),
        scale(),
      ]
await services.stop()

let passed = 0
let failed = 0
let skipped = 0
let packages = 0
const failures = []
const files = []
for (const report of reports) {
  if (!existsSync(report)) continue
  const json = JSON.parse(readFileSync(report, 'utf8'))
  packages++
  passed += json.numPassedTests
  failed += json.numFailedTests
  skipped += json.numPendingTests + json.numTodoTests
  for (const file of json.testResults ?? []) {
    const where = file.name.slice(root.length)
    files.push({ where, ms: (file.endTime ?? 0) - (file.startTime ?? 0) })
    for (const test of file.assertionResults ?? []) {
      if (test.status !== 'failed') continue
      // A time-out's report holds only a stack named STACK_TRACE_ERROR: say what it was.
      const first = String(test.failureMessages?.[0] ?? '').split('\n', 1)[0]
      const why =
        first === 'Error: STACK_TRACE_ERROR'
          ? `timed out after ${((test.duration ?? 0) / 1000).toFixed(1)} s`
          : first
      failures.push(`${where} > ${test.fullName}\n    ${why.slice(0, 300)}`)
    }
    // A file that failed before any test ran (an import error, a hook) has no failed test.
    if (
      file.status === 'failed' &&
      !(file.assertionResults ?? []).some((t) => t.status === 'failed')
    )
      failures.push(
        `${where}\n    ${String(file.message ?? '')
          .split('\n', 1)[0]
          .slice(0, 300)}`,
      )
  }
}
const status = statuses.find((code) => code !== 0) ?? 0
if (status !== 0 && failed === 0) failed = 1 // a task failed outside vitest (build, publint, attw)
// The slowest files, so a run's time can be read off its log's tail.
const slowest = files.sort((a, b) => b.ms - a.ms).slice(0, 8)
console.log(
  `\nSlowest files:\n${slowest.map((f) => `  ${(f.ms / 1000).toFixed(1).padStart(6)} s  ${f.where}`).join('\n')}`,
)
// The failures again, last, where a truncated log still shows them.
if (failures.length > 0) console.log(`\nFailed:\n${failures.map((f) => `  ${f}`).join('\n')}`)
console.log(`\nTest reports from ${packages} packages.`)
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
process.exit(status)
