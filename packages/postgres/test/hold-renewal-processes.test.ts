// An Event's hold across processes, released after every renewal of it: two app instances
// (OS processes, fixtures/ledger-instance.mjs) take turns delivering one Event's changes, each
// pool reaching PostgreSQL through a slow link (startSlowLink: every packet held 15 to 35 ms
// each way, so one connection's statement can overtake another's). The ledger's renewal of a
// hold is then often still on its way when the delivery ends; one landing after the release
// would take the Event again (a store holds a free resource for whoever asks), and the other
// instance's next delivery would wait out its orderWaitMs and answer 409 until the hold
// lapsed. Every delivery answers 200, each runs once.
import { type ChildProcess, spawn } from 'node:child_process'
import { sendTestEvent, startSlowLink } from '@scheduling-kit/testing'
import { afterEach, expect, it } from 'vitest'
import { DATABASE_URL, migratedSchema } from './helpers.js'

const SECRET = 'hold-renewal-secret'
const children: ChildProcess[] = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
})

/** Starts an instance; resolves to its port and the payload ids it ran, once it listens. */
function instance(env: Record<string, string>): Promise<{ port: number; runs: string[] }> {
  const child = spawn(
    process.execPath,
    [new URL('./fixtures/ledger-instance.mjs', import.meta.url).pathname],
    { cwd: new URL('..', import.meta.url), env: { ...process.env, SECRET, ...env } },
  )
  children.push(child)
  return new Promise((resolve, reject) => {
    let err = ''
    let out = ''
    const runs: string[] = []
    child.stderr!.on('data', (d) => (err += d))
    child.stdout!.on('data', (d) => {
      out += d
      const lines = out.split('\n')
      out = lines.pop()!
      for (const line of lines) {
        if (line.startsWith('run ')) runs.push(line.slice(4))
        else resolve({ port: (JSON.parse(line) as { port: number }).port, runs })
      }
    })
    child.on('exit', (code) => reject(new Error(`instance exited (${code}): ${err}`)))
  })
}

/** The `n`th change of one Event: its payload id new each time, its time later each time. */
const change = (n: number, start: number) => ({
  type: 'event.updated',
  id: `payload_holdrenewal${n}`,
  occurred_at: new Date(start + n).toISOString(),
  payload: { id: 'event_one', state: n % 2 === 0 ? 'confirmed' : 'rescheduled' },
})

it('two instances taking turns on one Event through a slow link to PostgreSQL: each delivery finds the Event free, none answered 409', async () => {
  const schema = await migratedSchema('hold_renewal')
  const link = await startSlowLink({ to: DATABASE_URL, delayMs: 15, jitterMs: 20 })
  try {
    // Renewals every 100 ms (a third of the lease), each 30 ms or more on the way; a delivery
    // finding the Event held gives up after 150 ms, well before a stray hold would lapse.
    const env = {
      DATABASE_URL: link.through(DATABASE_URL),
      SCHEMA: schema,
      LEASE_MS: '300',
      ORDER_WAIT_MS: '150',
    }
    const apps = await Promise.all([
      instance({ ...env, HOLD_MS: '70' }),
      instance({ ...env, HOLD_MS: '130' }),
    ])
    const start = Date.now() - 60_000
    const statuses: number[] = []
    for (let n = 0; n < 24; n++) {
      const url = `http://127.0.0.1:${apps[n % 2]!.port}/webhooks/scheduling`
      statuses.push((await sendTestEvent(url, change(n, start), { secret: SECRET })).status)
    }
    expect(statuses).toEqual(statuses.map(() => 200))
    const runs = apps.flatMap((app) => app.runs).sort()
    expect(runs).toEqual(Array.from({ length: 24 }, (_, n) => change(n, start).id).sort())
  } finally {
    for (const child of children.splice(0)) child.kill('SIGKILL')
    link.stop()
  }
}, 120_000)
