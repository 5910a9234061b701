// One `createScheduling` object per process, the app instances' and the worker's alike: the
// same stores, ledger and queue, configured from the same environment.
import { createCredentialCipher, createScheduling, type Scheduling } from '@scheduling-kit/express'
import { type Backend, openBackend } from './backend.js'
import type { Config } from './config.js'

export async function configure(
  config: Config,
  poolSize: number,
): Promise<{ scheduling: Scheduling; backend: Backend }> {
  // Tokens, webhook secrets and the bodies the ledger keeps are sealed at rest: a dump or a
  // replica shows none of them.
  const keyList = config.credentialKeys.split(',').map((entry) => entry.split(':'))
  const cipher = createCredentialCipher({
    keys: Object.fromEntries(keyList),
    current: keyList[0]![0]!,
  })
  const backend = await openBackend(config, cipher, poolSize)
  const scheduling = createScheduling({
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    redirectUri: `${config.publicUrl}/auth/scheduling/callback`,
    authUrl: config.authUrl,
    apiUrl: config.apiUrl,
    cookieSecret: config.cookieSecret,
    // Each connected account gets its own webhook, delivering to /webhooks/accounts.
    webhookUrl: `${config.publicUrl}/webhooks/accounts`,
    stores: backend.stores,
    // Every delivery recorded with its outcome, in the same Redis or database.
    ledger: true,
    // The app instances only verify and queue; the worker runs the handlers.
    queue: backend.queue,
  })
  return { scheduling, backend }
}
