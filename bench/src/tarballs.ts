// What installing each package downloads and writes: `pnpm pack` of every published package,
// packed (gzip) and unpacked bytes, beside the figures of the last dual ESM + CommonJS build
// (56183ac, measured the same way). Core is held to half of the 600 kB (packed) the weight issue
// measured before its start-up work; the adapters' tarballs are mostly their README.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Target } from './harness.js'

const packages = fileURLToPath(new URL('../../packages/', import.meta.url))

/** Packed / unpacked bytes of each package's tarball at 56183ac (dual ESM + CJS, two core builds). */
const DUAL_BUILD: Record<string, [packed: number, unpacked: number]> = {
  bullmq: [15_708, 64_500],
  core: [751_970, 3_193_589],
  express: [9_661, 40_904],
  fastify: [9_162, 41_694],
  h3: [7_473, 35_240],
  koa: [7_499, 33_481],
  postgres: [38_649, 170_965],
  'postgres-queue': [23_574, 102_555],
  redis: [34_164, 147_364],
  testing: [184_525, 766_751],
}
const CORE_LIMIT = 300_000

/** The sum of the sizes of a tarball's files, as `tar -tvzf` lists them. */
function unpackedBytes(tarball: string): number {
  return execFileSync('tar', ['-tvzf', tarball], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[2]), 0)
}

export function tarballsBench(): Target[] {
  const dir = mkdtempSync(join(tmpdir(), 'sk-bench-tarballs-'))
  const rows: string[] = []
  const sums = [0, 0, 0, 0]
  let corePacked = 0
  try {
    for (const name of readdirSync(packages).sort()) {
      const before = DUAL_BUILD[name]
      if (before === undefined) continue
      const tarball = execFileSync('pnpm', ['pack', '--pack-destination', dir], {
        cwd: join(packages, name),
        encoding: 'utf8',
      })
        .trim()
        .split('\n')
        .at(-1)!
      const packed = statSync(tarball).size
      const unpacked = unpackedBytes(tarball)
      if (name === 'core') corePacked = packed
      sums[0]! += before[0]
      sums[1]! += packed
      sums[2]! += before[1]
      sums[3]! += unpacked
      rows.push(
        `| @scheduling-kit/${name} | ${before[0]} | ${packed} | ${(packed / before[0]).toFixed(2)}x | ${before[1]} | ${unpacked} | ${(unpacked / before[1]).toFixed(2)}x |`,
      )
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const [packedBefore, packed, unpackedBefore, unpacked] = sums as [number, number, number, number]
  console.log('\nTarballs (pnpm pack), bytes: the dual build of 56183ac / ESM only, one core build')
  console.log('| package | packed before | packed | ratio | unpacked before | unpacked | ratio |')
  console.log('|---|---:|---:|---:|---:|---:|---:|')
  for (const row of rows) console.log(row)
  console.log(
    `| all | ${packedBefore} | ${packed} | ${(packed / packedBefore).toFixed(2)}x | ${unpackedBefore} | ${unpacked} | ${(unpacked / unpackedBefore).toFixed(2)}x |`,
  )
  return [
    {
      what: '@scheduling-kit/core tarball, packed (half of the 600 kB measured before)',
      ratio: corePacked / 1000,
      limit: CORE_LIMIT / 1000,
      kind: 'max',
      unit: ' kB',
    },
    {
      what: 'every package tarball, packed / the dual build of 56183ac',
      ratio: packed / packedBefore,
      limit: 0.5,
      kind: 'max',
    },
  ]
}
