import type { ApiWebhook } from '@scheduling-kit/core'
import { createSchedulingClient, isApiError, isSchedulingError } from '@scheduling-kit/core'

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
  --help                Show this help

Exits 0 on success, 1 when the API refused or failed (its status and message are printed),
2 for a usage error.`

/** Columns, padded to their widest cell. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

const row = (w: ApiWebhook) => [w.id, w.state ?? '-', w.created_at ?? '-', w.url]

export interface WebhooksCommand {
  action: string
  target: string | undefined
  apiUrl: string
  token: string
  json: boolean
}

/** Runs one `webhooks` action; returns the exit code. */
export async function runWebhooks(command: WebhooksCommand): Promise<number> {
  const api = createSchedulingClient({ baseUrl: command.apiUrl, token: command.token })
  const print = (value: unknown, rows: ApiWebhook[]) =>
    console.log(
      command.json
        ? JSON.stringify(value, null, 2)
        : table([['ID', 'STATE', 'CREATED', 'URL'], ...rows.map(row)]),
    )
  try {
    switch (command.action) {
      case 'list': {
        const all: ApiWebhook[] = []
        for await (const webhook of api.webhooks.list()) all.push(webhook)
        if (!command.json && all.length === 0) console.log('No webhooks.')
        else print(all, all)
        return 0
      }
      case 'get': {
        const found = await api.webhooks.get(command.target!)
        if (found === undefined) {
          console.error(
            `No webhook ${command.target} (404): it does not exist, or is another account's.`,
          )
          return 1
        }
        print(found, [found])
        return 0
      }
      case 'create': {
        const made = await api.webhooks.create({ url: command.target! })
        print(made, [made])
        if (!command.json)
          console.log(`\nSigning secret (shown this once; store it now): ${made.secret}`)
        return 0
      }
      case 'delete': {
        const gone = await api.webhooks.delete(command.target!)
        console.log(
          command.json
            ? JSON.stringify(gone ?? null)
            : gone === undefined
              ? `No webhook ${command.target}: nothing to delete.`
              : `Deleted ${gone.id}.`,
        )
        return 0
      }
    }
  } catch (error) {
    if (isApiError(error)) {
      console.error(error.message)
      const said = typeof error.body === 'string' ? error.body : JSON.stringify(error.body)
      if (said !== undefined && error.status !== 422)
        console.error(`The API said: ${said.slice(0, 500)}`)
      if (error.status === 401)
        console.error('Check the token (--token or SCHEDULING_TOKEN): the API did not accept it.')
      return 1
    }
    if (isSchedulingError(error)) {
      console.error(error.message)
      return 1
    }
    throw error
  }
  return 2
}
