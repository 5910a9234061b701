import { serverText } from '@scheduling-kit/core/store'
import { parseOptions, usageError } from './cli-args.js'
import { call, post, refused } from './cli-page-client.js'
import { cell, DEFAULT_MAX_PAGES, safeJson } from './cli-webhooks.js'

export const DELIVERIES_HELP = `Usage: scheduling-kit deliveries list|show <id>|replay <id>|purge --page <url> [options]

Reads an app's delivery ledger through its delivery page (createDeliveryPage(ledger, ...), mounted by the app),
with the page's own authorization: pass what its authorize function checks with --header.

  list            The newest deliveries, as a table: status, attempts, type, account, error
  show <id>       One delivery, every field but its body
  replay <id>     Runs the delivery again where the handlers are (in the app, or queued for
                  its worker); its handlers see context.replay. A done one is not run again
  purge           Drops the bodies, entries and marks past the ledger's retention; with --account,
                  every body of that account (a disconnect, a request to erase)

Options:
  --page <url>          The page's address, e.g. http://127.0.0.1:3000/admin/deliveries
  --header <h>          A request header, "name: value" (repeatable), e.g. the app's admin
                        cookie or an authorization header
  --status <s>          list: received, processing, done, failed, dead or stale
  --account <key>       list: one connected account's deliveries; purge: its bodies
  --type <type>         list: one event type
  --limit <n>           list: at most n deliveries (default 50; pages are followed)
  --max-pages <n>       list: read at most n pages (default 100), then stop, saying so
  --json                JSON instead of a table
  --help                Show this help

Everything printed from the app is cleaned: control characters, bidirectional overrides and
zero-width characters become spaces in the table and \\uXXXX escapes in JSON.

Exits 0 on success, 1 when the page refused or failed (its status is printed), 2 for a usage
error.`

export interface DeliveriesCommand {
  action: 'list' | 'show' | 'replay' | 'purge'
  id?: string
  page: string
  headers: Record<string, string>
  filter: { status?: string; account?: string; type?: string }
  limit: number
  /** `list`: the most pages read. */
  maxPages?: number
  json: boolean
}

/** How long `list` follows the page's pages, in ms. */
const LIST_TIMEOUT_MS = 120_000

interface ListedEntry {
  id: string
  type: string
  status: string
  attempts: number
  account?: string
  source: string
  receivedAt: number
  lastError?: string
}

function table(entries: ListedEntry[]): string {
  const rows = entries.map((e) => [
    cell(e.status, 10),
    cell(e.attempts, 10),
    cell(e.type, 40),
    cell(e.account, 30),
    cell(e.source, 10),
    timeCell(e.receivedAt),
    cell(e.id, 80),
    cell(e.lastError, 100),
  ])
  const head = ['STATUS', 'TRIES', 'TYPE', 'ACCOUNT', 'SOURCE', 'RECEIVED', 'ID', 'LAST ERROR']
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  return [head, ...rows]
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

/** A time the page gave, as ISO text; anything that is no time, cleaned as it came. */
function timeCell(value: unknown): string {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= 8.64e15
    ? new Date(value).toISOString()
    : cell(value, 40)
}

/** `purge`: what retention says is over, or one account's bodies. */
async function purge(command: DeliveriesCommand): Promise<number> {
  const { page, headers } = command
  const read = await call(`${page}?${new URLSearchParams({ limit: '1' })}`, headers)
  if (read.status !== 200) return refused(read.status)
  const { account } = command.filter
  const done = await post(page, headers, read, {
    purge: '1',
    ...(account === undefined ? {} : { account }),
  })
  if (done.status !== 200) return refused(done.status)
  const purged = done.body as { bodies: number; entries: number; marks?: number }
  const marks = typeof purged.marks === 'number' ? `, ${purged.marks} marks` : ''
  if (command.json) console.log(safeJson(purged, 2))
  else
    console.log(
      `Purged ${purged.bodies} bodies${marks} and ${purged.entries} entries${account === undefined ? '' : ` of ${serverText(account, 100)}`}.`,
    )
  return 0
}

/** Runs `scheduling-kit deliveries ...`; resolves to the exit code. */
export async function runDeliveries(command: DeliveriesCommand): Promise<number> {
  if (command.action === 'purge') return purge(command)
  if (command.action === 'list') return list(command)
  return showOrReplay(command)
}

/** `list`: the page's list read page after page, to `--limit` entries, as a table or JSON. */
async function list(command: DeliveriesCommand): Promise<number> {
  const { page, headers } = command
  const entries: ListedEntry[] = []
  const maxPages = command.maxPages ?? DEFAULT_MAX_PAGES
  const started = Date.now()
  const seen = new Set<string>()
  let after: string | undefined
  let pages = 0
  do {
    if (pages === maxPages || Date.now() - started > LIST_TIMEOUT_MS) {
      console.error(
        `Stopped after ${pages} pages (${entries.length} deliveries): the list goes on${pages === maxPages ? ' (--max-pages <n> reads further)' : `, past ${LIST_TIMEOUT_MS / 1000} s`}.`,
      )
      break
    }
    const query = new URLSearchParams(command.filter)
    if (after !== undefined) query.set('after', after)
    const { status, body } = await call(`${page}?${query}`, headers)
    pages++
    if (status !== 200) return refused(status)
    const listed = body as { entries?: unknown; next?: unknown } | undefined
    if (!Array.isArray(listed?.entries)) {
      console.error('The page answered no list of deliveries: is --page the delivery page?')
      return 1
    }
    entries.push(...(listed.entries as ListedEntry[]))
    after = typeof listed.next === 'string' && listed.next !== '' ? listed.next : undefined
    if (after !== undefined) {
      if (seen.has(after)) {
        console.error(`The page's list loops (page ${pages} gives a cursor seen before): stopped.`)
        break
      }
      seen.add(after)
    }
  } while (after !== undefined && entries.length < command.limit)
  const shown = entries.slice(0, command.limit)
  console.log(
    command.json ? safeJson(shown, 2) : shown.length === 0 ? 'No delivery matches.' : table(shown),
  )
  return 0
}

/** `show` and `replay`: the one entry read, then printed, or replayed with the page's token. */
async function showOrReplay(command: DeliveriesCommand): Promise<number> {
  const { page, headers } = command
  const id = command.id!
  const read = await call(`${page}?${new URLSearchParams({ id })}`, headers)
  if (read.status === 404) {
    console.error(`No delivery ${serverText(id, 100)} in the ledger.`)
    return 1
  }
  if (read.status !== 200) return refused(read.status)
  const entry = (read.body as { entry?: unknown } | undefined)?.entry
  if (typeof entry !== 'object' || entry === null) {
    console.error('The page answered no delivery: is --page the delivery page?')
    return 1
  }
  if (command.action === 'show') {
    console.log(
      command.json
        ? safeJson(entry, 2)
        : Object.entries(entry)
            .map(([k, v]) => `${cell(k, 40).padEnd(14)}${cell(v, 300)}`)
            .join('\n'),
    )
    return 0
  }
  // The page takes a replay with the token it set on the read just made.
  const done = await post(page, headers, read, { replay: id })
  if (done.status !== 200) return refused(done.status)
  const report = done.body as { replayed: number; queued?: number; problems: { why: string }[] }
  if (command.json) console.log(safeJson(report, 2))
  else if (report.replayed === 1) console.log(`Replayed ${serverText(id, 100)}.`)
  else if (report.queued === 1)
    console.log(`Queued ${serverText(id, 100)}: the worker replays it and records how it ends.`)
  else console.log(`Not replayed: ${cell(report.problems[0]?.why, 200)}.`)
  return report.replayed === 1 || report.queued === 1 ? 0 : 1
}

/** `scheduling-kit deliveries ...`: its arguments checked, then run. */
export async function deliveries(args: string[]): Promise<number> {
  const { values, positionals } = parseOptions(DELIVERIES_HELP, args, {
    page: { type: 'string' },
    header: { type: 'string', multiple: true },
    status: { type: 'string' },
    account: { type: 'string' },
    type: { type: 'string' },
    limit: { type: 'string' },
    'max-pages': { type: 'string' },
    json: { type: 'boolean' },
  })
  if (values.help) {
    console.log(DELIVERIES_HELP)
    return 0
  }
  const [action, id, ...extra] = positionals
  if (action !== 'list' && action !== 'show' && action !== 'replay' && action !== 'purge')
    usageError('Name an action: list, show <id>, replay <id> or purge.', DELIVERIES_HELP)
  const byId = action === 'show' || action === 'replay'
  if (byId && (id === undefined || id === ''))
    usageError(`${action} needs the delivery id.`, DELIVERIES_HELP)
  if (extra.length > 0 || (!byId && id !== undefined))
    usageError(`Unexpected argument "${extra[0] ?? id}".`, DELIVERIES_HELP)
  const page = values.page as string | undefined
  if (page === undefined || !URL.canParse(page))
    usageError("--page must be the delivery page's absolute URL.", DELIVERIES_HELP)
  const headers: Record<string, string> = {}
  for (const line of (values.header as string[] | undefined) ?? []) {
    const colon = line.indexOf(':')
    if (colon < 1) usageError(`--header "${line}" is not "name: value".`, DELIVERIES_HELP)
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const limit = Number(values.limit ?? 50)
  if (!Number.isSafeInteger(limit) || limit < 1)
    usageError('--limit must be a whole number, 1 or more.', DELIVERIES_HELP)
  const maxPages = Number(values['max-pages'] ?? DEFAULT_MAX_PAGES)
  if (!Number.isSafeInteger(maxPages) || maxPages < 1)
    usageError('--max-pages must be a whole number, 1 or more.', DELIVERIES_HELP)
  const filter: Record<string, string> = {}
  for (const name of ['status', 'account', 'type'] as const)
    if (typeof values[name] === 'string') filter[name] = values[name] as string
  return await runDeliveries({
    action,
    ...(id === undefined ? {} : { id }),
    page,
    headers,
    filter,
    limit,
    maxPages,
    json: values.json === true,
  })
}
