// The runtime matrix: the same scenario (fixtures/scenario.mjs) on Node 22 (22.12.0, the oldest supported), 24 and 26, Bun, Deno
// and workerd, against @scheduling-kit/core and @scheduling-kit/h3 as `pnpm pack` ships them.
// Every runtime is held to the same expectations, to the in-process run on this Node, and to the
// crypto its export conditions select. The runtimes are fetched from the npm registry when the
// matrix runs (internal/runtime-binaries). A runtime the registry has no binary of for this
// platform is skipped, saying why, on a developer's machine; under CI=true on linux-x64 it fails,
// as does any runtime whose fetch failed.
import { createHmac } from 'node:crypto'
import { join } from 'node:path'
import * as core from '@scheduling-kit/core'
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import {
  cacheDir,
  miniflare,
  type RuntimeBinary,
  runtimeBinaries,
} from '@scheduling-kit/runtime-binaries'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScenario } from '../fixtures/scenario.mjs'
import {
  bundleWorker,
  fixtures,
  type Project,
  packedProject,
  type WorkerBundle,
} from './project.js'
import { runJson } from './run.js'

type Observed = Awaited<ReturnType<typeof runScenario>>

interface Crypto {
  sign: number
  verify: number
  createHmac?: number
}

/** What a run printed: the host's (Node, Bun, Deno) or the Miniflare driver's (workerd). */
interface RunResult {
  runtime: { name: string; version?: string }
  crypto: Crypto
  scenario: Observed
  /** Node, Bun, Deno: the files the runtime resolved for the packages. */
  resolved?: { core: string; platform: string; h3Adapter: string }
  /** Node, Bun, Deno: a forged delivery through h3, a signed one and its retry, an app route. */
  h3?: {
    forged: number
    delivered: number
    retried: number
    app: { status: number; text: string }
    handled: string[]
  }
  /** workerd: the same through Hono, and a sign-in through the OAuth routes under Hono. */
  hono?: {
    forged: number
    delivered: number
    handled: string[]
    login: { status: number; location?: string }
  }
  /** workerd: the webhook-only Worker's forged and signed delivery. */
  webhookOnly?: { forged: number; delivered: number; handled: string[] }
  /** workerd: the compatibility date both Workers ran at. */
  compatibilityDate?: string
  /** workerd: every fetch the Worker made, as `outboundService` saw it. */
  outbound?: string[]
  /** workerd: the bundle esbuild made. */
  bundle?: WorkerBundle
}

type Build = 'node' | 'web'
interface Runtime {
  id: 'node22' | 'node24' | 'node26' | 'bun' | 'deno' | 'workerd' | 'workerd-2025'
  label: string
  /** workerd: the Workers' compatibility date. */
  compatibilityDate?: string
  /** The build of core its export conditions select. */
  build: Build
}

const MATRIX: Runtime[] = [
  { id: 'node22', label: 'Node 22', build: 'node' },
  { id: 'node24', label: 'Node 24', build: 'node' },
  { id: 'node26', label: 'Node 26', build: 'node' },
  // Bun matches the `node` condition: the node:crypto build, on Bun's own node:crypto.
  { id: 'bun', label: 'Bun', build: 'node' },
  // Deno's own condition selects the node:crypto build: Deno implements node:crypto, at about
  // a tenth of the cost of its Web Crypto per 2 KiB verification (bench/RESULTS.md).
  { id: 'deno', label: 'Deno', build: 'node' },
  // workerd's condition selects the Web Crypto build: no node:crypto without nodejs_compat.
  { id: 'workerd', label: 'workerd (Miniflare)', build: 'web', compatibilityDate: '2026-07-01' },
  // The oldest compatibility date the README claims: no WeakRef or FinalizationRegistry there
  // (workerd enables them from 2025-05-05), so nothing late may be touched at module load.
  {
    id: 'workerd-2025',
    label: 'workerd 2025-01-01',
    build: 'web',
    compatibilityDate: '2025-01-01',
  },
]
const isWorkerd = (runtime: Runtime) => runtime.compatibilityDate !== undefined

const SECRET = 'whsec_runtimes_0123456789'
const COOKIE_SECRET = 'cookie-secret-runtimes-0123456789abcdef'
const REDIRECT_URI = 'http://app.runtimes.test/auth/scheduling/callback'
/** Where the Worker believes the authorization server is; `outboundService` routes it to loopback. */
const WORKER_AUTH_URL = 'http://auth.runtimes.test'
const BODY = JSON.stringify({ type: 'event.created', id: 'payload_sign', note: 'Café ☕' })
const IDS = {
  created: 'payload_created',
  large: 'payload_large',
  unknown: 'payload_unknown',
  h3: 'payload_through_framework',
}
const CORE_DEFAULT_ENTRY = /(^|\/)node_modules\/@scheduling-kit\/core\/dist\/index\.js$/

const binaries = await runtimeBinaries()
const driver = miniflare()
/** Every runtime must run here: CI on the platform the matrix is built for. */
const mustRun = process.env.CI === 'true' && `${process.platform}-${process.arch}` === 'linux-x64'

let project: Project
let auth: TokenServer
let reference: Observed

function inputFor(id: string, authUrl: string) {
  const account = `acct_${id}`
  return {
    secret: SECRET,
    body: BODY,
    clientId: auth.clientId,
    clientSecret: auth.clientSecret,
    cookieSecret: COOKIE_SECRET,
    redirectUri: REDIRECT_URI,
    authUrl,
    account,
    codes: {
      client: auth.issueCode(account, REDIRECT_URI),
      routes: auth.issueCode(account, REDIRECT_URI),
    },
    ids: IDS,
  }
}
type Input = ReturnType<typeof inputFor>

/** Where the runtime's binary is, or why it cannot run here. */
function found(runtime: Runtime): RuntimeBinary {
  if (!isWorkerd(runtime)) return binaries[runtime.id as Exclude<Runtime['id'], `workerd${string}`>]
  // Miniflare 4 needs a recent Node: it runs on the matrix's Node 24.
  const node = binaries.node24
  const version = driver.version
  if (node.path === undefined) {
    const why = `Miniflare runs on Node 24: ${node.unavailable ?? node.missing}`
    return node.unavailable ? { version, unavailable: why } : { version, missing: why }
  }
  if (driver.missing !== undefined) return { version, missing: driver.missing }
  return { version, path: node.path }
}

/** Why a runtime is skipped on this machine, or `undefined`: it runs (or fails saying why). */
function skipReason(runtime: Runtime): string | undefined {
  const binary = found(runtime)
  if (binary.unavailable === undefined || mustRun) return undefined
  return binary.unavailable
}

/** The binary to run, or a failure saying why the runtime is not there. */
function binary(runtime: Runtime): string {
  const binary = found(runtime)
  if (binary.path !== undefined) return binary.path
  throw new Error(
    `${runtime.label} cannot run on this machine: ${binary.missing ?? binary.unavailable}.`,
  )
}

async function run(runtime: Runtime, input: Input): Promise<RunResult> {
  const command = binary(runtime)
  const cwd = project.dir
  const json = JSON.stringify(input)
  if (isWorkerd(runtime)) {
    const bundle = await bundleWorker(project)
    const webhookOnly = await bundleWorker(project, 'worker-webhooks.mjs')
    const { result } = await runJson<RunResult>(
      command,
      [join(fixtures, 'miniflare.mjs'), bundle.path, json, auth.url, webhookOnly.path],
      {
        cwd,
        env: {
          MINIFLARE_ENTRY: driver.entry,
          COMPATIBILITY_DATE: runtime.compatibilityDate ?? '',
        },
      },
    )
    return { ...result, bundle }
  }
  if (runtime.id === 'deno') {
    // No --allow-env: the packages must not need it (reading NODE_ENV would throw without it).
    const args = ['run', '--no-lock', '--allow-read', '--allow-net=127.0.0.1']
    const env = { DENO_DIR: join(cwd, '.deno'), DENO_NO_UPDATE_CHECK: '1' }
    return (await runJson<RunResult>(command, [...args, 'host.mjs', json], { cwd, env })).result
  }
  const args = runtime.id === 'bun' ? ['--no-install', 'host.mjs', json] : ['host.mjs', json]
  return (await runJson<RunResult>(command, args, { cwd })).result
}

const summary: string[] = []

beforeAll(async () => {
  project = packedProject()
  auth = await startTokenServer({ redirectUri: REDIRECT_URI })
  reference = await runScenario(core, inputFor('reference', auth.url))
}, 300_000)

afterAll(async () => {
  await auth?.close()
  project?.remove()
  console.log(
    `\nRuntime matrix (packed packages; runtimes cached in ${cacheDir}):\n${summary.join('\n')}`,
  )
})

describe('the in-process reference (this Node, the workspace build)', () => {
  it('signs like node:crypto, refuses every forgery, answers each case with its status', () => {
    const hex = createHmac('sha256', SECRET).update(BODY).digest('hex')
    expect(reference.signatures.header.toLowerCase()).toBe(`sha256=${hex}`)
    expect(reference.signatures).toMatchObject({ lowerHex: true, upperHex: true, mixedHex: true })
    expect(reference.signatures.otherSecret).toBe(false)
    expect(Object.values(reference.signatures.forged)).toHaveLength(8)
    expect(Object.values(reference.signatures.forged).every((ok) => ok === false)).toBe(true)
    expect(reference.webhooks.answers).toEqual({
      delivered: { status: 200 },
      retried: { status: 200 },
      forged: { status: 401, code: 'signature_invalid' },
      unsigned: { status: 401, code: 'signature_missing' },
      hostileHeader: { status: 401, code: 'signature_invalid' },
      tooLarge: { status: 413, code: 'payload_too_large' },
      tooLargeStreamed: { status: 413, code: 'payload_too_large' },
      stalled: { status: 408, code: 'body_timeout' },
      notJson: { status: 415, code: 'unsupported_media_type' },
      unknownType: { status: 200 },
      offPath: 404,
    })
    expect(reference.webhooks.handled).toEqual([IDS.created])
    expect(reference.webhooks.reached).toEqual([
      { type: 'event.created', id: IDS.created },
      { type: 'calendar.synced', id: IDS.unknown },
    ])
    // Refusals are logged (so the search below reads real lines), none with a secret in it.
    expect(reference.logLines).toBeGreaterThan(0)
    expect(reference.secretLogged).toBe(false)
  })
})

for (const runtime of MATRIX) {
  const skipped = skipReason(runtime)
  if (skipped !== undefined) {
    const line = `  ${runtime.label.padEnd(20)} SKIPPED: ${skipped}`
    summary.push(line)
    console.warn(`\n!!! runtime matrix: ${runtime.label} is SKIPPED on this machine: ${skipped}\n`)
  }
  describe.skipIf(skipped !== undefined)(
    `${runtime.label}${skipped ? ` (skipped: ${skipped})` : ''}`,
    () => {
      let outcome: { input: Input; result: RunResult } | { error: unknown }
      const result = (): { input: Input; result: RunResult } => {
        if ('error' in outcome) throw outcome.error
        return outcome
      }

      beforeAll(async () => {
        const input = inputFor(runtime.id, isWorkerd(runtime) ? WORKER_AUTH_URL : auth.url)
        try {
          outcome = { input, result: await run(runtime, input) }
          const { runtime: seen, crypto } = outcome.result
          const version = seen.version ?? `${driver.workerdVersion} (Miniflare ${driver.version})`
          summary.push(
            `  ${runtime.label.padEnd(20)} ${version.padEnd(32)} ${runtime.build} platform, ` +
              `subtle ${crypto.sign + crypto.verify}, createHmac ${crypto.createHmac ?? '-'}`,
          )
        } catch (error) {
          outcome = { error }
          summary.push(`  ${runtime.label.padEnd(20)} FAILED: ${String(error).split('\n')[0]}`)
        }
      }, 300_000)

      scenarioCases(runtime, result)
      buildCases(runtime, result)
    },
  )
}

/** What every runtime must do as the reference does: the version, signatures, webhooks, OAuth. */
function scenarioCases(runtime: Runtime, result: () => { input: Input; result: RunResult }): void {
  it('is the version the matrix installs', () => {
    const { result: ran } = result()
    if (isWorkerd(runtime)) {
      expect(ran.runtime).toEqual({ name: 'workerd' })
      expect(ran.compatibilityDate).toBe(runtime.compatibilityDate)
      return
    }
    const id = runtime.id as Exclude<Runtime['id'], `workerd${string}`>
    expect(ran.runtime).toEqual({
      name: id.startsWith('node') ? 'node' : id,
      version: binaries[id].version,
    })
  })

  it('signs, verifies either case of hex and refuses every forgery, as the reference does', () => {
    const { result: ran } = result()
    expect(ran.scenario.signatures).toEqual(reference.signatures)
  })

  it('answers the webhook cases as the reference: dedupe, 401, 413, 408, 415, the catch-all', () => {
    const { result: ran } = result()
    expect(ran.scenario.webhooks).toEqual(reference.webhooks)
    expect(ran.scenario.logLines).toBe(reference.logLines)
    expect(ran.scenario.secretLogged).toBe(false)
  })

  it('builds the authorization URL, exchanges codes and refreshes once at the loopback token endpoint', () => {
    const { input, result: ran } = result()
    const { oauth } = ran.scenario
    expect(oauth.authorize).toEqual({
      endpoint: `${input.authUrl}/oauth/authorize`,
      params: {
        response_type: 'code',
        client_id: auth.clientId,
        redirect_uri: REDIRECT_URI,
        state: 'state_runtimes',
        scope: 'read write',
      },
    })
    // The client's exchange: real tokens of this runtime's account, as the server issued them.
    expect(auth.accountOf(`Bearer ${oauth.tokens.accessToken}`)).toBe(input.account)
    expect(oauth.tokens.expiresAt).toBe(7200 * 1000)
    const forms = auth.tokenRequests.map((request) => request.form)
    expect(forms).toContainEqual({
      grant_type: 'authorization_code',
      code: input.codes.client,
      redirect_uri: REDIRECT_URI,
      client_id: auth.clientId,
      client_secret: auth.clientSecret,
    })
    // The routes: sign-in cookie, a forged state refused, then the callback stores the tokens.
    expect(oauth.login.status).toBe(302)
    expect(oauth.login.endpoint).toBe(`${input.authUrl}/oauth/authorize`)
    expect(oauth.login.cookie).not.toBe('')
    expect(oauth.forgedState).toBe(400)
    expect(oauth.callback).toEqual({ status: 302, location: '/' })
    expect(auth.accountOf(`Bearer ${oauth.stored?.accessToken}`)).toBe(input.account)
    expect(forms.filter((form) => form.code === input.codes.routes)).toHaveLength(1)
    // The token manager: three callers, one refresh, one new token for all of them.
    const refreshes = forms.filter((form) => form.refresh_token === oauth.tokens.refreshToken)
    expect(refreshes).toEqual([
      {
        grant_type: 'refresh_token',
        refresh_token: oauth.tokens.refreshToken,
        client_id: auth.clientId,
        client_secret: auth.clientSecret,
      },
    ])
    expect(new Set(oauth.refreshed).size).toBe(1)
    expect(oauth.refreshed[0]).not.toBe(oauth.tokens.accessToken)
    expect(auth.accountOf(`Bearer ${oauth.refreshed[0]}`)).toBe(input.account)
  })
}

/** The build a runtime's export conditions select, and the framework it serves through. */
function buildCases(runtime: Runtime, result: () => { input: Input; result: RunResult }): void {
  if (runtime.build === 'node') {
    it('uses the node:crypto platform: runtime/platform.node.js, createHmac, never Web Crypto', () => {
      const { result: ran } = result()
      expect(ran.resolved?.core).toMatch(CORE_DEFAULT_ENTRY)
      expect(ran.resolved?.platform).toMatch(
        /\/node_modules\/@scheduling-kit\/core\/dist\/runtime\/platform\.node\.js$/,
      )
      expect(ran.crypto.createHmac).toBeGreaterThan(0)
      expect(ran.crypto.sign + ran.crypto.verify).toBe(0)
    })
  } else {
    it('uses the Web Crypto platform: runtime/platform.js, subtle.sign and subtle.verify, no node:crypto', () => {
      const { result: ran } = result()
      if (isWorkerd(runtime)) {
        // The bundle holds the entry (and its chunks) and the Web platform file, nothing of the
        // node platform, and imports nothing from outside: workerd without nodejs_compat has no
        // node:crypto.
        expect(ran.bundle?.coreFiles).toContainEqual(expect.stringMatching(CORE_DEFAULT_ENTRY))
        expect(ran.bundle?.coreFiles).toContainEqual(
          expect.stringMatching(/\/core\/dist\/runtime\/platform\.js$/),
        )
        expect(ran.bundle?.coreFiles.filter((file) => file.includes('.node.'))).toEqual([])
        expect(ran.bundle?.externalImports).toEqual([])
      } else {
        expect(ran.resolved?.platform).toMatch(/\/core\/dist\/runtime\/platform\.js$/)
      }
      expect(ran.crypto.sign).toBeGreaterThan(0)
      expect(ran.crypto.verify).toBeGreaterThan(0)
      expect(ran.crypto.createHmac ?? 0).toBe(0)
    })
  }

  if (isWorkerd(runtime)) {
    it('loads the webhook-only Worker: refuses a forgery, handles a signed delivery', () => {
      const { result: ran } = result()
      expect(ran.webhookOnly).toEqual({ forged: 401, delivered: 200, handled: [IDS.h3] })
    })

    it('serves a webhook and a sign-in through Hono, and sends its fetches through outboundService', () => {
      const { result: ran } = result()
      expect(ran.hono).toEqual({
        forged: 401,
        delivered: 200,
        handled: [IDS.h3],
        login: { status: 302, location: `${WORKER_AUTH_URL}/oauth/authorize` },
      })
      expect(ran.outbound).toEqual([
        `POST ${WORKER_AUTH_URL}/oauth/token`,
        `POST ${WORKER_AUTH_URL}/oauth/token`,
        `GET ${WORKER_AUTH_URL}/me`,
        `POST ${WORKER_AUTH_URL}/oauth/token`,
      ])
    })
  } else {
    it('serves a webhook and its retry through h3 over loopback, with the app behind it', () => {
      const { result: ran } = result()
      expect(ran.resolved?.h3Adapter).toMatch(
        /\/node_modules\/@scheduling-kit\/h3\/dist\/index\.js$/,
      )
      expect(ran.h3).toEqual({
        forged: 401,
        delivered: 200,
        retried: 200,
        app: { status: 200, text: 'the app behind the middleware' },
        handled: [IDS.h3],
      })
    })
  }
}
