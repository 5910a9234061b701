import { ConfigError, WebhookError } from '../errors.js'
import type { Secrets } from './signature.js'

/**
 * The signing secret: one, a list while rotating, or a lookup by the `x-service-webhook-id`
 * header so one endpoint can serve many webhooks (multi-tenant apps).
 */
export type SecretSource =
  | Secrets
  | ((
      webhookId: string | undefined,
    ) => Secrets | null | undefined | Promise<Secrets | null | undefined>)

/** Checks a secret option at set-up time; throws `ConfigError` with the fix. */
export function assertSecretSource(secret: unknown, where: string): asserts secret is SecretSource {
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
        'Integrations, next to the webhook), for example process.env.SCHEDULING_SECRET, a list ' +
        'of secrets while rotating, or a function (webhookId) => secret.',
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

/** Resolves the secrets for one request; throws `secret_unknown` when there are none. */
export async function resolveSecrets(
  source: SecretSource,
  webhookId: string | undefined,
  webhookIdHeader: string,
): Promise<readonly string[]> {
  const found = typeof source === 'function' ? await source(webhookId) : source
  const list = typeof found === 'string' ? [found] : (found ?? [])
  // A lookup may answer anything: an empty or all-white-space secret is no secret at all.
  const usable = list.filter(isUsableSecret)
  if (usable.length === 0) {
    throw new WebhookError(
      'secret_unknown',
      webhookId === undefined
        ? `No signing secret is known for this request, and it has no ${webhookIdHeader} header to look one up by.`
        : `No signing secret is known for webhook id "${webhookId.slice(0, 64)}". Add it to your secret lookup.`,
    )
  }
  return usable
}
