// The ledger's cost per delivery in instructions, against the in-memory dedupe claim it
// replaces: the repeatable measure beside the timed table of ./ledger.ts, whose spread on this
// machine is wider than the difference asked about. Each variant runs in its own Node process
// under `valgrind --tool=callgrind` (`--single-threaded`: collection and compilation counted on
// the one thread): it makes its handler, signs W + N distinct 2 KiB deliveries, handles W to
// warm up, then N more. A third process does all of that but the N. Per delivery, a variant
// costs (its total - the third's) / N. Three processes per variant; the median, and the spread.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createDeliveryLedger, createWebhookHandler, MemoryLedgerStore } from '@scheduling-kit/core'
import type { Target } from './harness.js'
import { haveCallgrind } from './instructions.js'
import { SECRET, signedRequest } from './signed.js'

const WARM = 3_000
const COUNT = 10_000

type Mode = 'none' | 'dedupe' | 'ledger' | 'ledger-guard'

function request(n: number, resource: boolean) {
  const body = Buffer.from(
    JSON.stringify({
      id: `payload_instr_${n}`,
      type: 'event.created',
      occurred_at: new Date(1_700_000_000_000 + n).toISOString(),
      payload: resource
        ? { id: `event_instr_${n}`, state: 'confirmed', note: 'x'.repeat(1900) }
        : { note: 'x'.repeat(1900) },
    }),
  )
  return signedRequest(body)
}

/** One variant's process: what the parent counts. */
async function child(mode: Mode): Promise<void> {
  const handler = createWebhookHandler({
    secret: SECRET,
    ...(mode === 'ledger' || mode === 'ledger-guard'
      ? { ledger: createDeliveryLedger({ store: new MemoryLedgerStore({ maxEntries: 50_000 }) }) }
      : {}),
    onAny: () => {},
  })
  const resource = mode === 'ledger-guard'
  const requests = Array.from({ length: WARM + COUNT }, (_, n) => request(n, resource))
  const upTo = mode === 'none' ? WARM : WARM + COUNT
  for (let n = 0; n < upTo; n++) {
    const answer = await handler.handle(requests[n]!)
    if (answer?.status !== 200) throw new Error(`answered ${answer?.status}`)
  }
}

/** The whole process's instruction count, under callgrind. */
function totalOf(mode: Mode): number {
  const dir = mkdtempSync(join(tmpdir(), 'sk-ledger-instr-'))
  try {
    execFileSync(
      'valgrind',
      [
        '--tool=callgrind',
        `--callgrind-out-file=${join(dir, 'out')}`,
        process.execPath,
        '--single-threaded',
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        'child',
        mode,
      ],
      { stdio: 'ignore', timeout: 600_000 },
    )
    const totals = /^(?:totals|summary): (\d+)/m.exec(readFileSync(join(dir, 'out'), 'utf8'))
    if (!totals) throw new Error('no totals in the callgrind output')
    return Number(totals[1])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!

/** Instructions per delivery of each variant, and the ledger's ratio to the dedupe claim. */
export async function ledgerInstructionsBench(): Promise<Target[]> {
  if (!haveCallgrind()) {
    console.log('\n(ledger instructions: valgrind is not installed here; section skipped)')
    return []
  }
  const runs = Number(process.env.BENCH_CALLGRIND_PROCESSES ?? 3)
  const per: Record<Exclude<Mode, 'none'>, number[]> = {
    dedupe: [],
    ledger: [],
    'ledger-guard': [],
  }
  for (let i = 0; i < runs; i++) {
    const base = totalOf('none')
    for (const mode of ['dedupe', 'ledger', 'ledger-guard'] as const)
      per[mode].push((totalOf(mode) - base) / COUNT)
  }
  console.log(
    `\n| one 2 KiB delivery through handle(), in process (callgrind, ${runs} processes each) | instructions | / dedupe | spread |`,
  )
  console.log('|---|---:|---:|---|')
  const dedupe = median(per.dedupe)
  const names = {
    dedupe: 'in-memory dedupe (the default)',
    ledger: 'MemoryLedgerStore, no Event id',
    'ledger-guard': 'MemoryLedgerStore, an Event id (ordering guard)',
  }
  for (const mode of ['dedupe', 'ledger', 'ledger-guard'] as const) {
    const values = per[mode]
    const m = median(values)
    const spread = (Math.max(...values) - Math.min(...values)) / m
    console.log(
      `| ${names[mode]} | ${m.toFixed(0)} | ${(m / dedupe).toFixed(3)}x | ±${((spread / 2) * 100).toFixed(1)}% |`,
    )
  }
  return [
    {
      what: 'ledger (MemoryLedgerStore, no Event id) / in-memory dedupe, instructions per delivery',
      ratio: median(per.ledger) / dedupe,
      limit: 1.2,
      kind: 'max',
    },
  ]
}

if (process.argv[2] === 'child') await child(process.argv[3] as Mode)
