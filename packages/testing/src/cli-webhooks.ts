import type { ApiWebhook, SchedulingClient } from '@scheduling-kit/core'
import { createSchedulingClient, isApiError, isSchedulingError } from '@scheduling-kit/core'
import { serverText, textOf } from '@scheduling-kit/core/store'

export const WEBHOOKS_HELP = `Usage: scheduling-kit webhooks list|get <id>|create <url>|delete <id> [options]

Manages the webhooks of one account on the real service (or a fake one), with a personal
access token or an account's OAuth access token.

  list            Every webhook of the account, all pages, as a table
  get <id>        One webhook
  create <url>    A webhook receiving every event at <url>; prints its secret once: keep it
  delete <id>     Deletes a webhook

Options:
  --api-url <url>       The API's address with /v1 (or SCHEDULING_API_URL)
  --token <token>       The bearer token (or SCHEDULING_TOKEN; safer: it stays out of the
                        shell's history and the process list)
  --json                JSON instead of a table
  --limit <n>           list: print at most n webhooks (default 1000); rows are printed as
                        the pages arrive
  --max-pages <n>       list: read at most n pages (default 100), then stop, saying so
  --help                Show this help

Everything printed from the server is cleaned: control characters (escape sequences, line
breaks), bidirectional overrides and zero-width characters become spaces in the table and
\\uXXXX escapes in JSON.

Exits 0 on success, 1 when the API refused or failed (its status and message are printed),
2 for a usage error.`

/**
 * What `JSON.stringify` leaves raw of the characters `serverText` cleans: it escapes C0 controls
 * and lone surrogates itself, so only the line feeds of its own indentation stay raw.
 */
const UNSAFE_IN_JSON = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu

/**
 * A server's value as one table cell, whatever its type: text cleaned by core's `serverText`,
 * a number or a boolean as written, anything else as its JSON, cleaned; `-` when absent.
 */
export function cell(value: unknown, max: number): string {
  return serverText(textOf(value), max) || '-'
}

/**
 * JSON with every character `serverText` would clean written as a `\uXXXX` escape: the value is
 * kept whole, and no escape sequence, line break or bidirectional override reaches the terminal.
 */
export const safeJson = (value: unknown, space?: number) =>
  (JSON.stringify(value, null, space) ?? 'null').replace(
    UNSAFE_IN_JSON,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )

/** Column widths of the streamed table: rows are printed as they arrive, never collected. */
const WIDTHS = [24, 8, 20] as const

function line(cells: string[]): string {
  return cells
    .map((c, i) => (i < WIDTHS.length ? c.padEnd(WIDTHS[i]!) : c))
    .join('  ')
    .trimEnd()
}

const row = (w: ApiWebhook) =>
  line([cell(w.id, 64), cell(w.state, 16), cell(w.created_at, 40), cell(w.url, 500)])

const HEADER = line(['ID', 'STATE', 'CREATED', 'URL'])

export interface WebhooksCommand {
  action: string
  target: string | undefined
  apiUrl: string
  token: string
  json: boolean
  /** `list`: the most rows printed. */
  limit: number
  /** `list`: the most pages read. */
  maxPages?: number
}

/** The default of `--max-pages`: pages a listing reads before it stops, saying so. */
export const DEFAULT_MAX_PAGES = 100

/** The default of `--limit`: rows `list` prints before it stops. */
export const DEFAULT_LIST_LIMIT = 1000

/**
 * `list`: streams the rows as the pages arrive (a table, or a JSON array written element by
 * element) and stops at `limit`, saying so on stderr when the account has more.
 */
async function list(api: SchedulingClient, command: WebhooksCommand): Promise<number> {
  let printed = 0
  if (command.json) process.stdout.write('[')
  for await (const webhook of api.webhooks.list({
    maxPages: command.maxPages ?? DEFAULT_MAX_PAGES,
  })) {
    if (printed === command.limit) {
      console.error(
        `Stopped after ${command.limit} webhooks: the account has more (--limit <n> shows more).`,
      )
      break
    }
    if (command.json) process.stdout.write(`${printed === 0 ? '\n' : ',\n'}  ${safeJson(webhook)}`)
    else console.log(printed === 0 ? `${HEADER}\n${row(webhook)}` : row(webhook))
    printed++
  }
  if (command.json) console.log(printed === 0 ? ']' : '\n]')
  else if (printed === 0) console.log('No webhooks.')
  return 0
}

/** Runs one `webhooks` action; returns the exit code. */
export async function runWebhooks(command: WebhooksCommand): Promise<number> {
  const api = createSchedulingClient({ baseUrl: command.apiUrl, token: command.token })
  const print = (value: ApiWebhook) =>
    console.log(command.json ? safeJson(value, 2) : `${HEADER}\n${row(value)}`)
  const target = serverText(command.target ?? '', 200)
  try {
    switch (command.action) {
      case 'list':
        return await list(api, command)
      case 'get': {
        const found = await api.webhooks.get(command.target!)
        if (found === undefined) {
          console.error(`No webhook ${target} (404): it does not exist, or is another account's.`)
          return 1
        }
        print(found)
        return 0
      }
      case 'create': {
        const made = await api.webhooks.create({ url: command.target! })
        print(made)
        if (!command.json)
          console.log(`\nSigning secret (shown this once; store it now): ${cell(made.secret, 500)}`)
        return 0
      }
      case 'delete': {
        const gone = await api.webhooks.delete(command.target!)
        console.log(
          command.json
            ? safeJson(gone ?? null)
            : gone === undefined
              ? `No webhook ${target}: nothing to delete.`
              : `Deleted ${cell(gone.id, 64)}.`,
        )
        return 0
      }
    }
  } catch (error) {
    if (isApiError(error)) {
      console.error(serverText(error.message, 2000))
      const said = typeof error.body === 'string' ? error.body : JSON.stringify(error.body)
      if (said !== undefined && error.status !== 422)
        console.error(`The API said: ${serverText(said, 500)}`)
      if (error.status === 401)
        console.error('Check the token (--token or SCHEDULING_TOKEN): the API did not accept it.')
      return 1
    }
    if (isSchedulingError(error)) {
      if (command.json && command.action === 'list') console.log(']')
      console.error(serverText(error.message, 2000))
      if (error.code === 'list_too_long')
        console.error('The list goes on: --max-pages <n> reads further.')
      return 1
    }
    throw error
  }
  return 2
}
