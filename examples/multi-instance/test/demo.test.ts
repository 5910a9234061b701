import { spawn } from 'node:child_process'
import { expect, it, vi } from 'vitest'
import { startCollector } from './collector.js'

/** Runs the demo to its end, its processes exporting spans to `collector`. */
function runDemo(
  collector: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/demo.ts', ...args], {
    cwd: new URL('..', import.meta.url),
    env: { ...process.env, ...env, OTEL_EXPORTER_OTLP_ENDPOINT: collector },
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => {
    stdout += chunk
  })
  child.stderr.on('data', (chunk) => {
    stderr += chunk
  })
  return new Promise((resolve) =>
    child.on('close', (status) => resolve({ status, stdout, stderr })),
  )
}

// With --postgres, Redis is pointed at a port nothing listens on: nothing may need it.
it.each([
  ['pnpm demo:multi: three instances and a worker on one Redis', [], {}],
  [
    'pnpm demo:multi --postgres: the same on one PostgreSQL database, Redis unreachable',
    ['--postgres'],
    { REDIS_URL: 'redis://127.0.0.1:1' },
  ],
] as const)(
  '%s; every check as expected; each delivery’s trace crosses the queue into the worker',
  async (_, args, env) => {
    const collector = await startCollector()
    try {
      const run = await runDemo(collector.url, [...args], env)
      expect(run.stderr).not.toMatch(/FAIL|Error/)
      if (args.length > 0) expect(run.stdout).toMatch(/no Redis/)
      expect(run.stdout).toMatch(/instances ready \(GET \/ready answered 200\)\s+3\s+3\n/)
      expect(run.stdout).toMatch(/token refreshes for each of 3 expiries\s+1 1 1\s+1 1 1\n/)
      expect(run.stdout).toMatch(/events handled twice\s+0\s+0\n/)
      expect(run.stdout).toMatch(/events lost\s+0\s+0\n/)
      expect(run.stdout).toContain('Demo finished: every check as expected.')
      expect(run.status).toBe(0)

      // The processes send what they batched as they stop: wait for the worker's last spans.
      const handled = Number(/events handled by the worker\s+(\d+)/.exec(run.stdout)![1])
      const jobs = () => collector.spans.filter((s) => s.name.startsWith('process demo-'))
      await vi.waitFor(() => expect(jobs().length).toBeGreaterThanOrEqual(handled), {
        timeout: 60_000,
        interval: 100,
      })
      const byId = new Map(collector.spans.map((s) => [s.spanId, s]))
      const deliveries = new Map(
        collector.spans
          .filter((s) => s.name === 'scheduling.webhook.delivery')
          .map((s) => [s.traceId, s]),
      )
      for (const job of jobs()) {
        expect(job.instance).toBe('worker')
        // Its parent is the send span of a delivery on an app instance, in one trace.
        const send = byId.get(job.parentSpanId)
        expect(send?.name).toMatch(/^send demo-/)
        expect(send!.traceId).toBe(job.traceId)
        expect(job.links).toEqual([{ traceId: job.traceId, spanId: send!.spanId }])
        const delivery = deliveries.get(job.traceId)
        expect(delivery?.instance).toMatch(/^app-[123]$/)
        expect(send!.parentSpanId).toBe(delivery!.spanId)
        expect(job.attributes['scheduling.payload.id']).toBe(
          delivery!.attributes['scheduling.payload.id'],
        )
      }
      // And the handlers ran under the job's span.
      const jobIds = new Set(jobs().map((j) => j.spanId))
      const handlers = collector.spans.filter(
        (s) => s.name === 'scheduling.webhook.handler' && jobIds.has(s.parentSpanId),
      )
      expect(handlers.length).toBeGreaterThanOrEqual(handled)
    } finally {
      await collector.close()
    }
  },
  240_000,
)
