import { defaultProvider } from '../crypto/default.js'
import { ConfigError, serverText, WebhookError } from '../errors/errors.js'
import { toHexUpper } from '../platform/bytes.js'
import type { Secrets } from './signature.js'

/**
 * The signing secret: one, a list while rotating, or a lookup by the `x-service-webhook-id`
 * header so one endpoint can serve many webhooks (multi-tenant apps).
 */
export type SecretSource = Secrets | SecretLookup

/** The secrets of a webhook, by its id (the `x-service-webhook-id` header, when sent). */
export type SecretLookup = (
  webhookId: string | undefined,
) => Secrets | null | undefined | Promise<Secrets | null | undefined>

/** The preset's own hint: its queue worker's handler takes no secret. */
export const WORKER_HINT =
  ". A queue worker's handler (createBullMQWorker) verifies nothing: give it verify: false instead"

/** What a secret option may also be where a lookup is accepted (the preset, `constructEvent`). */
export const LOOKUP_HINT = ' or a function (webhookId) => secret'

/**
 * Checks a secret option at set-up time; throws `ConfigError` with the fix. `hints` end the
 * message with what else `where` accepts (`LOOKUP_HINT`, `WORKER_HINT`).
 */
export function assertSecretSource(
  secret: unknown,
  where: string,
  hints = '',
): asserts secret is SecretSource {
  if (typeof secret === 'function') return
  const list = typeof secret === 'string' ? [secret] : secret
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    list.some((s) => typeof s !== 'string' || s.trim() === '')
  ) {
    const got =
      secret === undefined || secret === null
        ? ` (it is ${String(secret)}: is the environment variable set where this process runs?)`
        : ''
    throw new ConfigError(
      `${where}: no signing secret was given${got}. Pass the webhook's signing secret (Settings > ` +
        `Integrations), such as process.env.SCHEDULING_SECRET, or a list while rotating${hints}.`,
    )
  }
}

/** A secret that can key an HMAC: a string with something besides white space in it. */
function isUsableSecret(secret: unknown): secret is string {
  return typeof secret === 'string' && secret.trim() !== ''
}

/** The usable secrets of a source that is not a lookup, computed once. */
export function staticSecrets(source: SecretSource): readonly string[] | undefined {
  if (typeof source === 'function') return undefined
  return (typeof source === 'string' ? [source] : source).filter(isUsableSecret)
}

/**
 * The longest webhook id handed to a secret lookup. The service's ids are `wh_` and a few dozen
 * characters; a longer header is no id of its, and is refused before the lookup runs.
 */
export const MAX_WEBHOOK_ID = 256

/** Resolves the secrets for one request; throws `secret_unknown` when there are none. */
export async function resolveSecrets(
  source: SecretSource,
  webhookId: string | undefined,
  webhookIdHeader: string,
): Promise<readonly string[]> {
  if (webhookId !== undefined && webhookId.length > MAX_WEBHOOK_ID) {
    throw new WebhookError(
      'secret_unknown',
      `The ${webhookIdHeader} header is ${webhookId.length} characters long, which is no webhook id (at most ${MAX_WEBHOOK_ID}); no secret was looked up.`,
    )
  }
  const found = typeof source === 'function' ? await source(webhookId) : source
  const list = typeof found === 'string' ? [found] : (found ?? [])
  // A lookup may answer anything: an empty or all-white-space secret is no secret at all.
  const usable = list.filter(isUsableSecret)
  if (usable.length === 0) {
    throw new WebhookError(
      'secret_unknown',
      webhookId === undefined
        ? `No signing secret is known for this request, and it has no ${webhookIdHeader} header to look one up by.`
        : `No signing secret is known for webhook id "${serverText(webhookId, 64)}". Add it to your secret lookup.`,
    )
  }
  return usable
}

const IDENTITY_INPUT = 'scheduling-kit:dedupe-identity'
const IDENTITY_CACHE_ENTRIES = 1024

/**
 * Names the secrets that verified deliveries, for dedupe keys: a secret's identity is the first
 * 16 bytes of its HMAC over a fixed text, in hex. It is what a signature proves (whoever signed
 * held that secret), unlike the webhook id header, which nothing signs: two deliveries of one
 * payload under one secret share a key in every process, however a lookup treated the id. The
 * identity reveals nothing of the secret. Remembered for the last secrets seen, so a lookup's
 * deliveries pay for one HMAC per secret, not per delivery.
 */
export class SecretIdentities {
  readonly #known = new Map<string, string>()

  of(secret: string): string | Promise<string> {
    const known = this.#known.get(secret)
    if (known !== undefined) return known
    return defaultProvider.sign(secret, IDENTITY_INPUT).then((mac) => {
      const identity = toHexUpper(mac.subarray(0, 16)).toLowerCase()
      // Past the bound the secret seen first goes, alone: the others keep their identities.
      if (this.#known.size >= IDENTITY_CACHE_ENTRIES)
        this.#known.delete(this.#known.keys().next().value!)
      this.#known.set(secret, identity)
      return identity
    })
  }
}
