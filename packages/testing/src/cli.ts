import { parseArgs } from 'node:util'
import { EVENT_TYPES, signPayload } from '@scheduling-kit/core'
import { createTestEvent } from './events.js'
import { startFakeSchedulingService } from './service.js'
import { sendTestEvent } from './sign.js'

const USAGE = `Usage: scheduling-kit <command> [options]

Commands:
  serve      Run the fake scheduling service (OAuth, API, webhooks) on this machine
  trigger    Send one signed event to a webhook receiver and print its answer
  sign       Print the signature header for a body read from standard input

Run "scheduling-kit <command> --help" for a command's options.`

const HELP: Record<string, string> = {
  serve: `Usage: scheduling-kit serve [options]

Runs the fake scheduling service until stopped (Ctrl-C).

Options:
  --port <n>            Port on 127.0.0.1 (default 4010; 0 picks a free one)
  --client-id <id>      OAuth client id (default client-123)
  --client-secret <s>   OAuth client secret (default client-secret-xyz)
  --redirect-uri <uri>  A redirect URI of the OAuth application (repeatable)
  --auto-approve        Approve at once instead of showing the consent page
  --webhook <url>       Register a webhook receiver (repeatable)
  --secret <s>          Signing secret of the registered webhooks (default: random, printed)
  --expires-in <s>      Access token lifetime in seconds (default 7200)
  --help                Show this help`,
  trigger: `Usage: scheduling-kit trigger <type> --url <receiver> --secret <secret> [options]
       scheduling-kit trigger <type> --service <fake service URL>

Sends one event of <type> (one of the 16 event types, or any other string) and prints the
answer. With --url, sends it signed straight to one receiver; exits 1 unless it answers 2xx.
With --service, asks a running fake service to deliver it to its registered webhooks (signed,
retried like the real service); exits 1 unless every first delivery got 2xx.

Options:
  --url <url>           The webhook receiver
  --secret <s>          The webhook's signing secret (with --url)
  --webhook-id <id>     The x-service-webhook-id header (default wh_test; with --service: only this webhook)
  --service <url>       A running fake service (scheduling-kit serve)
  --help                Show this help

Event types: ${EVENT_TYPES.join(', ')}`,
  sign: `Usage: scheduling-kit sign --secret <secret> < body.json

Prints the x-service-signature header value (sha256=<UPPER-CASE HEX>) for the exact bytes read
from standard input.

Options:
  --secret <s>          The signing secret (required)
  --help                Show this help`,
}

class UsageError extends Error {}

function fail(message: string, command?: string): never {
  throw new UsageError(`${message}\n\n${command ? HELP[command] : USAGE}`)
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

type Values = Record<string, string | boolean | string[] | undefined>
type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>

function parse(
  command: string,
  args: string[],
  options: OptionSpec,
): { values: Values; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { ...options, help: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    })
    return { values: values as Values, positionals }
  } catch (error) {
    fail((error as Error).message, command)
  }
}

async function serve(args: string[]): Promise<number> {
  const { values } = parse('serve', args, {
    port: { type: 'string' },
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true },
    'auto-approve': { type: 'boolean' },
    webhook: { type: 'string', multiple: true },
    secret: { type: 'string' },
    'expires-in': { type: 'string' },
  })
  if (values.help) {
    console.log(HELP.serve)
    return 0
  }
  const port = Number(values.port ?? 4010)
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    fail(`--port must be a port number, got "${values.port}"`, 'serve')
  const expiresIn = values['expires-in'] === undefined ? undefined : Number(values['expires-in'])
  if (expiresIn !== undefined && !(expiresIn > 0))
    fail('--expires-in must be a positive number of seconds', 'serve')
  for (const uri of [
    ...((values.webhook as string[]) ?? []),
    ...((values['redirect-uri'] as string[]) ?? []),
  ]) {
    if (!URL.canParse(uri)) fail(`"${uri}" is not an absolute URL`, 'serve')
  }
  const service = await startFakeSchedulingService({
    port,
    clientId: values['client-id'] as string | undefined,
    clientSecret: values['client-secret'] as string | undefined,
    redirectUris: values['redirect-uri'] as string[] | undefined,
    autoApprove: values['auto-approve'] === true,
    expiresIn,
  })
  console.log(`Fake scheduling service on ${service.url}`)
  console.log(`  authUrl ${service.authUrl}   apiUrl ${service.apiUrl}`)
  console.log(`  clientId ${service.clientId}   clientSecret ${service.clientSecret}`)
  for (const url of (values.webhook as string[]) ?? []) {
    const hook = service.registerWebhook({ url, secret: values.secret as string | undefined })
    console.log(`  webhook ${hook.id} -> ${url}   secret ${hook.secret}`)
  }
  console.log(`  dashboard ${service.url}/   control API ${service.url}/_control`)
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  await service.close()
  return 0
}

async function trigger(args: string[]): Promise<number> {
  const { values, positionals } = parse('trigger', args, {
    url: { type: 'string' },
    secret: { type: 'string' },
    'webhook-id': { type: 'string' },
    service: { type: 'string' },
  })
  if (values.help) {
    console.log(HELP.trigger)
    return 0
  }
  const [type, ...extra] = positionals
  if (!type) fail('Missing the event type.', 'trigger')
  if (extra.length > 0) fail(`Unexpected argument "${extra[0]}".`, 'trigger')
  if (values.service !== undefined) return triggerThroughService(type, values)
  if (typeof values.url !== 'string' || !URL.canParse(values.url))
    fail("--url must be the receiver's absolute URL.", 'trigger')
  if (typeof values.secret !== 'string' || values.secret === '')
    fail('--secret is required.', 'trigger')
  const event = createTestEvent(type)
  let answer: { status: number; body: string }
  try {
    answer = await sendTestEvent(values.url, event, {
      secret: values.secret,
      webhookId: values['webhook-id'] as string | undefined,
    })
  } catch (error) {
    console.error(
      `Could not reach ${values.url}: ${(error as Error).cause ?? (error as Error).message}`,
    )
    return 1
  }
  console.log(`${type} ${event.id} -> ${answer.status}`)
  if (answer.body) console.log(answer.body)
  return answer.status >= 200 && answer.status < 300 ? 0 : 1
}

/** `trigger --service`: the running fake service delivers the event to its webhooks. */
async function triggerThroughService(type: string, values: Values): Promise<number> {
  const service = values.service
  if (typeof service !== 'string' || !URL.canParse(service))
    fail("--service must be the fake service's URL.", 'trigger')
  let res: Response
  try {
    res = await fetch(new URL('/_control/trigger', service), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type, webhookId: values['webhook-id'] }),
    })
  } catch (error) {
    console.error(
      `Could not reach ${service}: ${(error as Error).cause ?? (error as Error).message}`,
    )
    return 1
  }
  if (!res.ok) {
    console.error(`${service} answered ${res.status}: ${await res.text()}`)
    return 1
  }
  const { event, deliveries } = (await res.json()) as {
    event: { id: string }
    deliveries: Array<{ webhookId: string; status?: number; error?: string; ok: boolean }>
  }
  console.log(`${type} ${event.id} -> ${deliveries.length} webhook(s)`)
  for (const d of deliveries) console.log(`  ${d.webhookId}: ${d.status ?? d.error}`)
  return deliveries.length > 0 && deliveries.every((d) => d.ok) ? 0 : 1
}

async function sign(args: string[]): Promise<number> {
  const { values } = parse('sign', args, { secret: { type: 'string' } })
  if (values.help) {
    console.log(HELP.sign)
    return 0
  }
  if (typeof values.secret !== 'string' || values.secret === '')
    fail('--secret is required.', 'sign')
  console.log(await signPayload(await readStdin(), values.secret))
  return 0
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE)
    return command === undefined ? 2 : 0
  }
  if (command === 'serve') return serve(rest)
  if (command === 'trigger') return trigger(rest)
  if (command === 'sign') return sign(rest)
  fail(`Unknown command "${command}".`)
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    console.error(
      error instanceof UsageError ? error.message : `scheduling-kit: ${(error as Error).message}`,
    )
    process.exitCode = error instanceof UsageError ? 2 : 1
  },
)
