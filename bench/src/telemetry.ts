// What OpenTelemetry costs a delivery: handle() of a 2 KiB delivery, with scheduling-kit's
// telemetry off (as without @opentelemetry/api), with the API present but no SDK registered
// (the target: no measurable change), and with an SDK recording every span and metric into an
// exporter that drops them (reported). The three share one process and are interleaved round
// by round; each batch first puts the global telemetry in its case's state, untimed.
import * as api from '@opentelemetry/api'
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace'
import {
  createWebhookHandler,
  type DedupeStore,
  type Logger,
  useOpenTelemetry,
} from '@scheduling-kit/core'
import { signedRequests } from './handle.js'
import {
  answerParent,
  type Case,
  type Measured,
  measure,
  measureInChild,
  ratio,
  type Target,
  table,
} from './harness.js'
import { haveCallgrind, instructionsPerRequest, spreadText } from './instructions.js'
import { eventBody } from './verify.js'

const SECRET = 'whsec_bench_telemetry'
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/** An exporter that takes every batch and keeps nothing. */
const dropping: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => {},
}

class IdleReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const OFF = 'telemetry off (no @opentelemetry/api)'
const NO_SDK = '@opentelemetry/api, no SDK'
const SDK = 'SDK, every span and metric, dropping exporter'

async function measureTelemetry(withSdk: boolean): Promise<Measured[]> {
  // A store that claims every key at once: the delivery's path (claim, handlers, complete)
  // without the in-memory store's evictions, whose garbage would drown a 2% difference.
  const store: DedupeStore = { claim: () => 'claimed', complete: () => {}, release: () => {} }
  const count = 4_096
  const requests = signedRequests(count, 'payload_otel', SECRET)
  const handler = createWebhookHandler({
    secret: SECRET,
    dedupe: store,
    logger: quiet,
    onAny: () => {},
  })
  const tracerProvider = new TracerProvider({
    spanProcessors: [new BatchSpanProcessor({ exporter: dropping })],
  })
  const meterProvider = new MeterProvider({ readers: [new IdleReader()] })
  const withoutSdk = () => {
    api.trace.disable()
    api.metrics.disable()
  }
  let i = 0
  const deliver = async () => {
    const answer = await handler.handle(requests[i++ % count]!)
    if (answer?.status !== 200) throw new Error('not handled')
  }
  const cases: Case[] = [
    {
      name: OFF,
      async: true,
      before: () => {
        withoutSdk()
        useOpenTelemetry(false)
      },
      run: deliver,
    },
    {
      name: NO_SDK,
      async: true,
      before: () => {
        withoutSdk()
        useOpenTelemetry(api)
      },
      run: deliver,
    },
  ]
  if (withSdk)
    cases.push({
      name: SDK,
      async: true,
      before: () => {
        withoutSdk()
        api.trace.setGlobalTracerProvider(tracerProvider)
        api.metrics.setGlobalMeterProvider(meterProvider)
        useOpenTelemetry(api)
      },
      run: deliver,
    })
  return measure(cases, { rounds: 31 })
}

/**
 * Instructions per 2 KiB delivery over HTTP on Express, telemetry off against the API without
 * an SDK: the repeatable measure of a difference this small (see ./instructions.ts).
 */
async function countInstructions(): Promise<Target[]> {
  if (!haveCallgrind()) {
    console.log('\nTelemetry in instructions: skipped, valgrind (callgrind) is not installed.')
    return []
  }
  const payload = eventBody(2048)
  const options = { warm: 4_000, count: 500 }
  const [off, present] = await Promise.all([
    instructionsPerRequest('express', 'ours', payload, {
      ...options,
      env: { BENCH_TELEMETRY: 'off' },
    }),
    instructionsPerRequest('express', 'ours', payload, options),
  ])
  console.log('\nInstructions per 2 KiB delivery on Express, by telemetry')
  console.log('| case | instructions | spread | vs off |')
  console.log('|---|---:|---|---:|')
  console.log(`| ${OFF} | ${Math.round(off!.perRequest)} | ${spreadText(off!)} | 1.000x |`)
  console.log(
    `| ${NO_SDK} | ${Math.round(present!.perRequest)} | ${spreadText(present!)} | ${(present!.perRequest / off!.perRequest).toFixed(3)}x |`,
  )
  return [
    {
      what: 'instructions per delivery (Express), @opentelemetry/api without an SDK / off',
      ratio: present!.perRequest / off!.perRequest,
      limit: 1.02,
      kind: 'max',
    },
  ]
}

export async function telemetryBench(): Promise<Target[]> {
  // The target's pair alone in its process: the SDK case's garbage and code paths stay out.
  const results = await measureInChild(import.meta.url, ['telemetry'])
  table('One 2 KiB delivery in process: telemetry off, or the API without an SDK', results, OFF)
  const recorded = await measureInChild(import.meta.url, ['telemetry', 'sdk'])
  table(
    'One 2 KiB delivery in process: telemetry off, the API alone, an SDK recording',
    recorded,
    OFF,
  )
  console.log(
    `\nWith an SDK recording every span and metric: ${ratio(recorded, SDK, OFF).toFixed(3)}x the delivery without telemetry (reported, no target).`,
  )
  const wallClock = ratio(results, NO_SDK, OFF)
  const spread = Math.max(...results.map((r) => r.spread * 50))
  console.log(
    `In wall-clock time the API without an SDK reads ${wallClock.toFixed(3)}x (rounds spread up to ±${spread.toFixed(1)}%); where valgrind runs, the instruction count below is the target.`,
  )
  const counted = await countInstructions()
  if (counted.length > 0) return counted
  // Without valgrind, the wall-clock ratio is all there is.
  return [
    {
      what: 'handle(), @opentelemetry/api without an SDK / telemetry off (wall clock)',
      ratio: wallClock,
      limit: 1.02,
      kind: 'max',
    },
  ]
}

if (process.argv[2] === 'telemetry') answerParent(await measureTelemetry(process.argv[3] === 'sdk'))
