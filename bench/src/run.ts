import { QUICK_SIZES } from './quick.js'

// `pnpm bench` runs every section (BENCH_ONLY=<name>,<name> picks some); `pnpm bench --quick`
// runs them at the sizes of quick.ts. Each section's duration is printed as it ends and in a
// table at the end, beside the targets.
const quick = process.argv.includes('--quick')
if (quick) for (const [name, value] of Object.entries(QUICK_SIZES)) process.env[name] ??= value
// The sections read their sizes as they load: imported once the sizes are set.
const { SECTIONS } = await import('./sections.js')
const { targets } = await import('./harness.js')

const names = SECTIONS.map(([name]) => name)
const only = new Set((process.env.BENCH_ONLY ?? names.join(',')).split(','))
const unknown = [...only].filter((name) => !names.includes(name))
if (unknown.length > 0) throw new Error(`BENCH_ONLY: no section ${unknown.join(', ')} (${names})`)

const all = []
const durations: [string, number][] = []
const started = performance.now()
for (const [name, section] of SECTIONS) {
  if (!only.has(name)) continue
  const at = performance.now()
  all.push(...(await section()))
  const seconds = (performance.now() - at) / 1000
  durations.push([name, seconds])
  console.log(`\n(section ${name}: ${seconds.toFixed(1)} s)`)
}
const ok = targets(all)
console.log(`\n| section (${quick ? 'quick' : 'full'}) | seconds |`)
console.log('|---|---:|')
for (const [name, seconds] of durations) console.log(`| ${name} | ${seconds.toFixed(1)} |`)
console.log(`| all | ${((performance.now() - started) / 1000).toFixed(1)} |`)
console.log(ok ? '\nAll targets met.' : '\nSome targets were missed.')
process.exitCode = ok ? 0 : 1
