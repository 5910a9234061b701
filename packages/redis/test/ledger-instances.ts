import { type ChildProcess, spawn } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { REDIS_URL } from './helpers.js'

/**
 * Today (UTC) at `hour`:00:`second`: a delivery's time within the handler's horizon (maxAgeMs),
 * the same in every process of a test.
 */
const todayAt = (hour: number, second: number) => {
  const now = new Date()
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), hour, 0, second)
}

// App instances for the ledger's multi-process tests (fixtures/ledger-instance.mjs), each an OS
// process with its own HTTP server, and the service's side: signed deliveries posted to them.

export const SECRET = 'ledger-processes-secret'

const children: ChildProcess[] = []

/** Kills every instance started so far. */
export function stopInstances(): void {
  for (const child of children.splice(0)) child.kill('SIGKILL')
}

/** A running instance: its port, its process, and the `run <id>` lines it printed so far. */
export interface Instance {
  port: number
  child: ChildProcess
  runs: string[]
}

/** Starts an app instance; resolves once it listens. */
export function instance(env: Record<string, string>): Promise<Instance> {
  const child = spawn(
    process.execPath,
    [new URL('./fixtures/ledger-instance.mjs', import.meta.url).pathname],
    {
      cwd: new URL('..', import.meta.url),
      env: { ...process.env, REDIS_URL, SECRET, ...env },
    },
  )
  children.push(child)
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    let started: Instance | undefined
    child.stderr.on('data', (d) => (err += d))
    child.stdout.on('data', (d) => {
      out += d
      const lines = out.split('\n')
      out = lines.pop()!
      for (const line of lines) {
        if (started === undefined) {
          started = { port: (JSON.parse(line) as { port: number }).port, child, runs: [] }
          resolve(started)
        } else if (line.startsWith('run ')) started.runs.push(line.slice(4))
      }
    })
    child.on('exit', (code) => reject(new Error(`instance exited (${code}): ${err}`)))
  })
}

/**
 * Posts a signed delivery (naming webhook `webhookId`: with ACCOUNTS=1, `wh_<account>`; with
 * LOOKUP=1, signed with that webhook's own secret); resolves to the status, 0 when the connection
 * failed.
 */
export function post(
  port: number,
  body: string,
  webhookId = 'wh_processes',
  secret = SECRET,
): Promise<number> {
  return fetch(`http://127.0.0.1:${port}/webhooks/scheduling`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-service-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      'x-service-webhook-id': webhookId,
    },
    body,
  }).then(
    (res) => res.status,
    () => 0,
  )
}

/** The `n`th `event.created` of a test, its payload id unique to `prefix`. */
export const envelope = (n: number, prefix: string) =>
  JSON.stringify({
    type: 'event.created',
    id: `payload_${prefix.replaceAll(/[^a-z0-9]/g, '')}${n}`,
    occurred_at: new Date(todayAt(10, n)).toISOString(),
    payload: { id: `event_${n}`, state: 'confirmed' },
  })
