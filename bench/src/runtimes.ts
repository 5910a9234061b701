// Verification on each runtime of the matrix, on the platform file of core its conditions
// select (package.json `imports`: #platform), against the floor on that runtime
// (./runtimes/verify-loop.mjs for Node, Bun and Deno; ./runtimes/verify-miniflare.mjs for
// workerd). Deno is also measured on the Web Crypto platform (a bundle without the `deno`
// condition), and workerd on both (the node:crypto one needs the nodejs_compat flag): the
// figures that decide which platform each condition selects. The runtimes come from the matrix's cache
// (@scheduling-kit/runtime-binaries); one missing here is skipped, saying why.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { miniflare, runtimeBinaries } from '@scheduling-kit/runtime-binaries'
import { build } from 'esbuild'
import type { Target } from './harness.js'

const dist = fileURLToPath(new URL('../../packages/core/dist/', import.meta.url))
const here = fileURLToPath(new URL('./runtimes/', import.meta.url))
const ENTRY = join(dist, 'index.js')

interface Sized {
  floorNs: number
  oursNs: number
  ratio: number
}
type Sizes = Record<string, Sized>

function runJson<T>(command: string, args: string[], env: Record<string, string> = {}): T {
  const out = execFileSync(command, args, {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 1 << 20,
  })
  return JSON.parse(out.trim().split('\n').at(-1)!) as T
}

const fmt = (s: Sized) =>
  `${(s.oursNs / 1000).toFixed(1)} µs | ${(s.floorNs / 1000).toFixed(1)} µs | ${s.ratio.toFixed(2)}x`

/** `file` bundled with core, its platform chosen by `conditions` (none: the Web platform). */
async function bundle(
  dir: string,
  file: string,
  name: string,
  conditions: string[],
): Promise<string> {
  const outfile = join(dir, `${name}.mjs`)
  await build({
    entryPoints: [file],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions,
    alias: { CORE: ENTRY },
    external: ['node:*'],
    outfile,
    logLevel: 'error',
  })
  return outfile
}

export async function runtimesBench(): Promise<Target[]> {
  const binaries = await runtimeBinaries()
  const rows: string[] = []
  const targets: Target[] = []
  const node = (build: string) => pathToFileURL(build).href
  const loop = join(here, 'verify-loop.mjs')
  const dir = mkdtempSync(join(tmpdir(), 'sk-bench-runtimes-'))
  try {
    // Node and Bun: the node platform, as their `node` condition selects it.
    const nodeLike: [string, string | undefined, string[]][] = [
      ['Node 22', binaries.node22.path, []],
      ['Node 24', binaries.node24.path, []],
      ['Node 26', binaries.node26.path, []],
      ['Bun', binaries.bun.path, ['--no-install']],
    ]
    const runs: [string, string, string | undefined, () => Sizes][] = nodeLike.map(
      ([label, path, flags]) => [
        label,
        'node:crypto (node)',
        path,
        () => runJson<{ sizes: Sizes }>(path!, [...flags, loop, node(ENTRY)]).sizes,
      ],
    )
    const deno = (build: string) => () =>
      runJson<{ sizes: Sizes }>(
        binaries.deno.path!,
        ['run', '--no-lock', '--allow-read', loop, node(build)],
        { DENO_NO_UPDATE_CHECK: '1' },
      ).sizes
    runs.push(
      ['Deno', 'node:crypto (deno)', binaries.deno.path, deno(ENTRY)],
      [
        'Deno',
        'Web Crypto (not selected)',
        binaries.deno.path,
        deno(await bundle(dir, join(here, 'core-entry.mjs'), 'deno-web', [])),
      ],
    )
    const measured = new Map<string, Sizes>()
    for (const [label, build, path, run] of runs) {
      if (path === undefined) {
        rows.push(`| ${label} | ${build} | skipped: not on this machine | | | | | |`)
        continue
      }
      const sizes = run()
      measured.set(`${label} ${build}`, sizes)
      rows.push(`| ${label} | ${build} | ${fmt(sizes['2048']!)} | ${fmt(sizes['1048576']!)} |`)
      // Bun's own createHmac by hand beats its node:crypto hex digest by about 0.5 µs at 2 KiB
      // (a cost of Bun's, not of the build: the raw digest compared by hand is no faster there).
      if (build.includes('not selected') || label === 'Bun') continue
      for (const [size, kib] of [
        ['2048', '2 KiB'],
        ['1048576', '1 MiB'],
      ] as const) {
        targets.push({
          what: `${label}: verifySignature at ${kib} / node:crypto by hand`,
          ratio: sizes[size]!.ratio,
          limit: 1.1,
          kind: 'max',
        })
      }
    }
    const denoNode = measured.get('Deno node:crypto (deno)')
    const denoWeb = measured.get('Deno Web Crypto (not selected)')
    if (denoNode && denoWeb) {
      // The build Deno's condition selects must be the faster one there.
      targets.push({
        what: 'Deno: verify at 2 KiB, node:crypto build / Web Crypto build',
        ratio: denoNode['2048']!.oursNs / denoWeb['2048']!.oursNs,
        limit: 1,
        kind: 'max',
      })
    }
    const driver = miniflare()
    if (driver.missing !== undefined || binaries.node24.path === undefined) {
      rows.push(
        `| workerd | | skipped: ${driver.missing ?? 'Miniflare runs on Node 24'} | | | | | |`,
      )
    } else {
      const worker = join(here, 'verify-worker.mjs')
      const web = await bundle(dir, worker, 'web', [])
      const nodeCompat = await bundle(dir, worker, 'node', ['node'])
      const result = runJson<{ web: Sizes; node: Sizes }>(
        binaries.node24.path,
        [join(here, 'verify-miniflare.mjs'), web, nodeCompat],
        { MINIFLARE_ENTRY: driver.entry! },
      )
      // The build workerd's condition selects must be the faster one there.
      targets.push({
        what: 'workerd: verify at 2 KiB, Web Crypto build / node:crypto build with nodejs_compat',
        ratio: result.web['2048']!.oursNs / result.node['2048']!.oursNs,
        limit: 1,
        kind: 'max',
      })
      rows.push(
        `| workerd | Web Crypto (workerd) | ${fmt(result.web['2048']!)} | ${fmt(result.web['1048576']!)} |`,
        `| workerd | node:crypto, nodejs_compat (not selected) | ${fmt(result.node['2048']!)} | ${fmt(result.node['1048576']!)} |`,
      )
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  console.log(
    '\nverifySignature on each runtime, against the floor on that runtime (Node, Bun, Deno: node:crypto createHmac + timingSafeEqual by hand; workerd: crypto.subtle.verify by hand with the key imported once), median of 15 interleaved rounds',
  )
  console.log('| runtime | build | 2 KiB: ours | floor | ratio | 1 MiB: ours | floor | ratio |')
  console.log('|---|---|---:|---:|---:|---:|---:|---:|')
  for (const row of rows) console.log(row)
  return targets
}
