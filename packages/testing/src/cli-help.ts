import { EVENT_TYPES } from '@scheduling-kit/core'
import { type OptionSpec, parseOptions, usageError } from './cli-args.js'
import { DELIVERIES_HELP } from './cli-deliveries.js'
import { WEBHOOKS_HELP } from './cli-webhooks.js'

// The CLI's usage and per-command help texts.

export const USAGE = `Usage: scheduling-kit <command> [options]

Commands:
  serve      Run the fake scheduling service (OAuth, API, webhooks) on this machine
  trigger    Send one signed event to a webhook receiver and print its answer
  sign       Print the signature header for a body read from standard input
  webhooks   List, get, create or delete an account's webhooks on the API (a real service)
  deliveries List, show, replay or purge an app's deliveries through its delivery page (its ledger)

Run "scheduling-kit <command> --help" for a command's options.`

export const HELP: Record<string, string> = {
  webhooks: WEBHOOKS_HELP,
  deliveries: DELIVERIES_HELP,
  serve: `Usage: scheduling-kit serve [options]

Runs the fake scheduling service until stopped (Ctrl-C).

Options:
  --port <n>            Port (default 4010; 0 picks a free one)
  --host <addr>         Address to listen on (default 127.0.0.1; 0.0.0.0 for every interface,
                        to reach it from another machine or a container)
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
       scheduling-kit trigger --all (--url <receiver> --secret <secret> | --service <URL>)

Sends one event of <type> (one of the 16 event types, or any other string) and prints the
answer. With --url, sends it signed straight to one receiver; exits 1 unless it answers 2xx.
With --service, asks a running fake service to deliver it to its registered webhooks (signed,
retried like the real service); exits 1 unless every first delivery got 2xx. With --all, sends
one event of each of the 16 types, one line each; exits 1 unless every one got 2xx.

Options:
  --all                 Every event type, one after the other
  --url <url>           The webhook receiver
  --secret <s>          The webhook's signing secret (with --url)
  --webhook-id <id>     The x-service-webhook-id header (default wh_test; with --service: only this webhook)
  --account <id>        With --service: an event of this account, sent to its webhooks
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

/** A usage error: `message` and the command's help (or the general usage), exit 2. */
export function fail(message: string, command?: string): never {
  usageError(message, command ? HELP[command]! : USAGE)
}

/** A command's options, parsed against its help's option list. */
export const parse = (command: string, args: string[], options: OptionSpec) =>
  parseOptions(HELP[command]!, args, options)
