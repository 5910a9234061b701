// The ledger's cost per delivery in instructions, against the in-memory dedupe claim it
// replaces: the repeatable measure beside the timed table of ./ledger.ts. Each variant runs in
// its own Node process under `valgrind --tool=callgrind`, instrumentation off while it starts,
// signs its deliveries and handles WARM of them; then `callgrind_control` turns it on and the
// process handles WINDOWS windows of COUNT distinct 2 KiB deliveries, told by a line on its
// stdin, the count dumped after each. Only the deliveries are counted: not the start, the
// signing or the warm-up (the earlier harness subtracted whole processes, and their start-up
// and compilation differed by more than the ledger's cost).
//
// Node runs with `--single-threaded` (collection and compilation counted on the main thread)
// and `--predictable-gc-schedule --random-seed=1 --hash-seed=1` (collections scheduled by the
// heap, not by timers, so a window's count does not depend on how busy the machine is). The
// figure is the mean over every window, collections included: the memory store keeps bodies,
// and a full collection of its heap (about 220 M instructions with 64 MiB held) falls in one
// window of four or five, so WINDOWS (9) x COUNT (1 000) deliveries are counted, the first
// left out (a late compilation falls there in some processes), and the smallest window, which
// would leave the collections out, is not used. Per variant: the median
// over processes of each process's mean per delivery, and the spread of those means.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { createDeliveryLedger, createWebhookHandler, MemoryLedgerStore } from '@scheduling-kit/core'
import type { Target } from './harness.js'
import {
  callgrindArgs,
  control,
  haveCallgrind,
  mainThreadInstructions,
  median,
} from './instructions.js'
import { SECRET, signedRequest } from './signed.js'

/** An hour ago: deliveries dated inside every horizon the handler refuses old bodies past. */
const RECENT = Date.now() - 3_600_000

const WARM = Number(process.env.BENCH_LEDGER_WARM ?? 6_000)
const COUNT = Number(process.env.BENCH_LEDGER_COUNT ?? 1_000)
const WINDOWS = Number(process.env.BENCH_LEDGER_WINDOWS ?? 9)

type Mode = 'dedupe' | 'ledger' | 'ledger-guard'

function request(n: number, resource: boolean) {
  const body = Buffer.from(
    JSON.stringify({
      id: `payload_instr_${n}`,
      type: 'event.created',
      occurred_at: new Date(RECENT + n).toISOString(),
      payload: resource
        ? { id: `event_instr_${n}`, state: 'confirmed', note: 'x'.repeat(1900) }
        : { note: 'x'.repeat(1900) },
    }),
  )
  return signedRequest(body)
}

/** One variant's process: warms, says `ready`, then handles a window per line read. */
async function child(mode: Mode): Promise<void> {
  const handler = createWebhookHandler({
    secret: SECRET,
    ...(mode === 'ledger' || mode === 'ledger-guard'
      ? {
          ledger: createDeliveryLedger({
            store: new MemoryLedgerStore({
              maxEntries: 50_000,
              ...(process.env.BENCH_LEDGER_MAX_BYTES
                ? { maxBytes: Number(process.env.BENCH_LEDGER_MAX_BYTES) }
                : {}),
            }),
          }),
        }
      : {}),
    onAny: () => {},
  })
  const resource = mode === 'ledger-guard'
  const requests = Array.from({ length: WARM + WINDOWS * COUNT }, (_, n) => request(n, resource))
  const handle = async (from: number, to: number) => {
    for (let n = from; n < to; n++) {
      const answer = await handler.handle(requests[n]!)
      if (answer?.status !== 200) throw new Error(`answered ${answer?.status}`)
    }
  }
  await handle(0, WARM)
  process.stdout.write('ready\n')
  let next = WARM
  for await (const _line of createInterface({ input: process.stdin })) {
    await handle(next, next + COUNT)
    next += COUNT
    process.stdout.write('done\n')
  }
}

/** The next line `child` writes that is `word`; its stderr in the error if it exits first. */
function told(child: ChildProcess, word: string, stderr: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    const exited = (code: number | null) =>
      reject(new Error(`exited with ${code} under callgrind: ${stderr()}`))
    lines.on('line', (line) => {
      if (line !== word) return
      lines.close()
      child.off('exit', exited)
      resolve()
    })
    child.once('exit', exited)
  })
}

/** One process of `mode`: instructions per delivery in each window. */
async function windowsOf(mode: Mode): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sk-ledger-instr-'))
  const child = spawn(
    'valgrind',
    callgrindArgs(
      dir,
      '--single-threaded --predictable-gc-schedule --random-seed=1 --hash-seed=1',
      [fileURLToPath(import.meta.url), 'child', mode],
    ),
    { stdio: ['pipe', 'pipe', 'pipe'] },
  )
  // What the child said last, for the error when it fails.
  let said = ''
  child.stderr!.on('data', (chunk: Buffer) => {
    said = (said + chunk.toString()).slice(-2_000)
  })
  try {
    await told(child, 'ready', () => said)
    control(child.pid!, '--instr=on')
    const perWindow: number[] = []
    for (let n = 1; n <= WINDOWS; n++) {
      control(child.pid!, '--zero')
      const done = told(child, 'done', () => said)
      child.stdin!.write('run\n')
      await done
      control(child.pid!, '--dump')
      perWindow.push(mainThreadInstructions(dir, n) / COUNT)
    }
    return perWindow
  } finally {
    child.kill('SIGKILL')
    if (process.env.BENCH_KEEP_CALLGRIND) console.log(`callgrind dumps of ${mode} kept in ${dir}`)
    else rmSync(dir, { recursive: true, force: true })
  }
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length

/** Instructions per delivery of each variant, and the ledger's ratio to the dedupe claim. */
export async function ledgerInstructionsBench(): Promise<Target[]> {
  if (!haveCallgrind()) {
    console.log('\n(ledger instructions: valgrind is not installed here; section skipped)')
    return []
  }
  const runs = Number(process.env.BENCH_CALLGRIND_PROCESSES ?? 3)
  const modes = ['dedupe', 'ledger', 'ledger-guard'] as const
  const per: Record<Mode, number[]> = { dedupe: [], ledger: [], 'ledger-guard': [] }
  // Counts do not depend on load: the three variants of a round run at once.
  for (let i = 0; i < runs; i++) {
    const counted = await Promise.all(modes.map((mode) => windowsOf(mode)))
    // The first window is warm-up still (a compilation lands there in some processes): left out.
    for (const [k, mode] of modes.entries()) per[mode].push(mean(counted[k]!.slice(1)))
    if (process.env.BENCH_CALLGRIND_WINDOWS)
      console.log(modes.map((m, k) => `${m}: ${counted[k]!.map(Math.round).join(' ')}`).join('; '))
  }
  console.log(
    `\n| one 2 KiB delivery through handle(), in process (callgrind: the mean of ${WINDOWS - 1} windows of ${COUNT}, collections included, after ${WARM} and one window more; ${runs} processes each) | instructions | / dedupe | spread |`,
  )
  console.log('|---|---:|---:|---|')
  const dedupe = median(per.dedupe)
  const names = {
    dedupe: 'in-memory dedupe (the default)',
    ledger: 'MemoryLedgerStore, no Event id',
    'ledger-guard': 'MemoryLedgerStore, an Event id (ordering guard)',
  }
  for (const mode of modes) {
    const values = per[mode]
    const m = median(values)
    const spread = (Math.max(...values) - Math.min(...values)) / m
    console.log(
      `| ${names[mode]} | ${m.toFixed(0)} | ${(m / dedupe).toFixed(3)}x | ±${((spread / 2) * 100).toFixed(1)}% (${values.map(Math.round).join(', ')}) |`,
    )
  }
  return [
    {
      what: 'ledger (MemoryLedgerStore, no Event id) / in-memory dedupe, instructions per delivery',
      ratio: median(per.ledger) / dedupe,
      limit: 1.3,
      kind: 'max',
    },
    {
      what: 'ledger with the ordering guard (an Event id) / in-memory dedupe, instructions per delivery',
      ratio: median(per['ledger-guard']) / dedupe,
      limit: 1.5,
      kind: 'max',
    },
  ]
}

if (process.argv[2] === 'child') await child(process.argv[3] as Mode)
