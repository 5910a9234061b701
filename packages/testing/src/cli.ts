import { signPayload } from '@scheduling-kit/core'
import { UsageError } from './cli-args.js'
import { deliveries } from './cli-deliveries.js'
import { fail, HELP, parse, USAGE } from './cli-help.js'
import { trigger } from './cli-trigger.js'
import { DEFAULT_LIST_LIMIT, DEFAULT_MAX_PAGES, runWebhooks } from './cli-webhooks.js'
import { startFakeSchedulingService } from './service.js'

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

async function serve(args: string[]): Promise<number> {
  const { values } = parse('serve', args, {
    port: { type: 'string' },
    host: { type: 'string' },
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
  const host = (values.host as string | undefined) ?? '127.0.0.1'
  if (host === '') fail('--host must be an address such as 127.0.0.1 or 0.0.0.0', 'serve')
  const service = await startFakeSchedulingService({
    port,
    host,
    clientId: values['client-id'] as string | undefined,
    clientSecret: values['client-secret'] as string | undefined,
    redirectUris: values['redirect-uri'] as string[] | undefined,
    autoApprove: values['auto-approve'] === true,
    expiresIn,
  })
  console.log(
    `Fake scheduling service on ${service.url}${host === '0.0.0.0' || host === '::' ? ` (listening on every interface, ${host})` : ''}`,
  )
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

async function webhooks(args: string[]): Promise<number> {
  const { values, positionals } = parse('webhooks', args, {
    'api-url': { type: 'string' },
    token: { type: 'string' },
    json: { type: 'boolean' },
    limit: { type: 'string' },
    'max-pages': { type: 'string' },
  })
  if (values.help) {
    console.log(HELP.webhooks)
    return 0
  }
  const [action, target, ...extra] = positionals
  if (action === undefined) fail('Missing the action: list, get, create or delete.', 'webhooks')
  if (!['list', 'get', 'create', 'delete'].includes(action))
    fail(`Unknown action "${action}".`, 'webhooks')
  if (action === 'list' && target !== undefined)
    fail(`Unexpected argument "${target}".`, 'webhooks')
  if (action !== 'list' && target === undefined)
    fail(
      `${action} needs ${action === 'create' ? 'the receiver URL' : 'the webhook id'}.`,
      'webhooks',
    )
  if (extra.length > 0) fail(`Unexpected argument "${extra[0]}".`, 'webhooks')
  if (action === 'create' && !URL.canParse(target!))
    fail(`"${target}" is not an absolute URL.`, 'webhooks')
  const apiUrl = (values['api-url'] as string | undefined) ?? process.env.SCHEDULING_API_URL
  if (apiUrl === undefined || !URL.canParse(apiUrl))
    fail(
      "--api-url (or SCHEDULING_API_URL) must be the API's absolute address with /v1.",
      'webhooks',
    )
  const token = (values.token as string | undefined) ?? process.env.SCHEDULING_TOKEN
  if (token === undefined || token === '')
    fail('--token (or SCHEDULING_TOKEN) is required: a personal access token.', 'webhooks')
  const limit = Number(values.limit ?? DEFAULT_LIST_LIMIT)
  if (!Number.isSafeInteger(limit) || limit < 1)
    fail('--limit must be a whole number of webhooks, 1 or more.', 'webhooks')
  const maxPages = Number(values['max-pages'] ?? DEFAULT_MAX_PAGES)
  if (!Number.isSafeInteger(maxPages) || maxPages < 1)
    fail('--max-pages must be a whole number of pages, 1 or more.', 'webhooks')
  return await runWebhooks({
    action,
    target,
    apiUrl,
    token,
    json: values.json === true,
    limit,
    maxPages,
  })
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
  if (command === 'webhooks') return webhooks(rest)
  if (command === 'deliveries') return deliveries(rest)
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
