import { randomBytes } from 'node:crypto'
import {
  type CredentialCipher,
  createCredentialCipher,
  createTokenManager,
  generateCredentialKey,
  isSchedulingError,
  newConnection,
  type ReencryptResult,
  type SubscriptionRecord,
  type SubscriptionStore,
  type TokenRecord,
  type TokenStore,
} from '@scheduling-kit/core'
import { describe, expect, it } from 'vitest'

type Kind = 'token' | 'subscription'
type Sweeping<S> = S & { reencrypt(): Promise<ReencryptResult> }

/** A store backend as the attacks on sealed records reach it: its stores, and its raw data. */
export interface SealedBackend {
  name: string
  tokens(cipher?: CredentialCipher): Sweeping<TokenStore>
  subscriptions(cipher?: CredentialCipher): Sweeping<SubscriptionStore>
  /** Everything the backend holds for these stores, as text: every key, field, row and column. */
  dump(): Promise<string>
  /** A record as stored: its JSON, or its sealed string (without JSON quotes). */
  readRaw(kind: Kind, key: string): Promise<string>
  /** Puts a raw value where a record is stored, as an attacker with write access would. */
  writeRaw(kind: Kind, key: string, value: string): Promise<void>
}

/**
 * A secret as it could appear in a dump: as it is, in hex, in base64 and base64url at each of
 * the three byte alignments (the middle, which does not depend on what surrounds it), and
 * URL-encoded.
 */
export function encodingsOf(secret: string): string[] {
  const out = new Set([secret, encodeURIComponent(secret)])
  const bytes = Buffer.from(secret)
  out.add(bytes.toString('hex'))
  out.add(bytes.toString('hex').toUpperCase())
  for (let offset = 0; offset < 3; offset++) {
    const shifted = Buffer.concat([Buffer.alloc(offset, 0x20), bytes])
    for (const form of ['base64', 'base64url'] as const) {
      out.add(shifted.toString(form).slice(4, -4))
    }
  }
  return [...out]
}

/** The secrets a dump shows, in any of their encodings. */
export function revealed(dump: string, secrets: readonly string[]): string[] {
  return secrets.filter((secret) => encodingsOf(secret).some((form) => dump.includes(form)))
}

const token = (kind: string) => `${kind}_${randomBytes(18).toString('hex')}`
const unique = (name: string) => `at-rest:${name}:${randomBytes(4).toString('hex')}`

function tokens(): TokenRecord {
  return {
    accessToken: token('at'),
    refreshToken: token('rt'),
    tokenType: 'bearer',
    expiresAt: Date.now() + 7_200_000,
    obtainedAt: Date.now(),
    account: { id: 'acct', email: 'ada@example.com' },
  }
}

function subscription(): SubscriptionRecord {
  return {
    active: true,
    updatedAt: Date.now(),
    webhooks: [
      {
        id: `wh_${randomBytes(8).toString('hex')}`,
        secret: token('whsec'),
        url: 'https://app.example.com/webhooks',
        createdAt: Date.now(),
      },
    ],
  }
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'read'
  } catch (error) {
    if (isSchedulingError(error)) return error.code
    throw error
  }
}

/** One byte of the sealed value's ciphertext changed (a character of its base64url). */
function flipped(sealed: string): string {
  const parts = sealed.split('.')
  const body = parts[4]!
  parts[4] = (body[0] === 'A' ? 'B' : 'A') + body.slice(1)
  return parts.join('.')
}

/**
 * The attacks on sealed records every store backend must stand: a dump shows no token or
 * secret in any encoding; a record copied onto another key, a flipped byte, a dropped tag
 * and an unknown key id are each refused with their own code, nothing connected and nothing
 * flagged; rotation reads old keys and plaintext, and `reencrypt()` moves every record onto
 * the current key with its version kept.
 */
export function runSealedStoreAttacks(backend: SealedBackend): void {
  const k1 = generateCredentialKey()
  const k2 = generateCredentialKey()
  const first = createCredentialCipher({ keys: { k1 }, current: 'k1' })
  const rotated = createCredentialCipher({ keys: { k1, k2 }, current: 'k2' })
  const quiet = { debug() {}, info() {}, warn() {}, error() {} }
  /** The migration mode: plaintext records are read, for reencrypt() to seal them. */
  const migrating = createCredentialCipher({
    keys: { k1, k2 },
    current: 'k2',
    plaintext: 'accept',
    logger: quiet,
  })

  describe(`${backend.name}: credentials at rest`, () => {
    it('a dump holds no access token, refresh token or webhook secret, in any encoding (and finds them without the cipher)', async () => {
      const secrets: string[] = []
      const tokenStore = backend.tokens(first)
      const subscriptions = backend.subscriptions(first)
      for (let i = 0; i < 5; i++) {
        const record = tokens()
        secrets.push(record.accessToken, record.refreshToken)
        await tokenStore.set(unique('dump'), record)
        const sub = subscription()
        secrets.push(sub.webhooks[0]!.secret)
        await subscriptions.compareAndSet(unique('dump'), sub, undefined)
      }
      expect(revealed(await backend.dump(), secrets)).toEqual([])
      // The same check sees a record stored without the cipher: the dump reaches the data.
      const plain = tokens()
      await backend.tokens().set(unique('plain'), plain)
      const sub = subscription()
      await backend.subscriptions().compareAndSet(unique('plain'), sub, undefined)
      const control = [plain.accessToken, plain.refreshToken, sub.webhooks[0]!.secret]
      expect(revealed(await backend.dump(), control)).toEqual(control)
    })

    it('a record copied onto another key, a flipped byte, a dropped tag, an unknown key id: each refused with its own code, the record left as it was', async () => {
      const store = backend.tokens(rotated)
      const [a, b] = [unique('victim'), unique('attacker')]
      await store.set(a, tokens())
      await store.set(b, tokens())
      const sealed = await backend.readRaw('token', a)
      const own = await backend.readRaw('token', b)
      const attempts: Array<[string, string]> = [
        [sealed, 'credential_mismatch'],
        [flipped(own), 'credential_tampered'],
        [own.split('.').slice(0, 5).join('.'), 'credential_malformed'],
      ]
      for (const [value, code] of attempts) {
        await backend.writeRaw('token', b, value)
        const error = await store.get(b).catch((e: unknown) => e)
        expect(isSchedulingError(error) && error.code).toBe(code)
        expect((error as Error).message).toContain(JSON.stringify(b))
        expect(await backend.readRaw('token', b)).toBe(value)
      }
      const foreign = createCredentialCipher({
        keys: { k9: generateCredentialKey() },
        current: 'k9',
      })
      await backend.tokens(foreign).set(b, tokens())
      const unknown = await store.get(b).catch((e: unknown) => e)
      expect(isSchedulingError(unknown) && unknown.code).toBe('credential_key_unknown')
      expect((unknown as { keyId?: string }).keyId).toBe('k9')
      expect(await codeOf(backend.tokens().get(b))).toBe('credential_key_unknown')
      // The victim's own record still reads.
      expect((await store.get(a))?.refreshToken).toMatch(/^rt_/)

      const subscriptions = backend.subscriptions(rotated)
      const [s1, s2] = [unique('sub-victim'), unique('sub-attacker')]
      const record = subscription()
      await subscriptions.compareAndSet(s1, record, undefined)
      await subscriptions.compareAndSet(s2, subscription(), undefined)
      await backend.writeRaw('subscription', s2, await backend.readRaw('subscription', s1))
      expect(await codeOf(subscriptions.get(s2))).toBe('credential_mismatch')
      expect((await subscriptions.findByWebhook(record.webhooks[0]!.id))?.key).toBe(s1)
    })

    it('rotation: old-key and (in the migration mode) plaintext records are read; reencrypt() seals them all under the current key, versions kept, while a writer keeps its place', async () => {
      const keys = [unique('rot'), unique('rot'), unique('rot')]
      await backend.tokens(first).set(keys[0]!, tokens())
      await backend.tokens(first).set(keys[1]!, tokens())
      await backend.tokens().set(keys[2]!, tokens())
      const sub = unique('rot-sub')
      await backend.subscriptions().compareAndSet(sub, subscription(), undefined)
      // Without the migration mode the plaintext record is refused, and a sweep reports it.
      expect(await codeOf(backend.tokens(rotated).get(keys[2]!))).toBe('credential_plaintext')
      const refused = await backend.tokens(rotated).reencrypt()
      expect(refused.failed.filter((e) => e.key === keys[2]).map((e) => e.code)).toEqual([
        'credential_plaintext',
      ])
      const store = backend.tokens(migrating)
      const before = await Promise.all(keys.map((k) => store.get(k)))
      expect(before.every((r) => r?.accessToken.startsWith('at_'))).toBe(true)

      const tokenSweep = await store.reencrypt()
      expect(tokenSweep.rewritten).toBeGreaterThanOrEqual(1)
      expect(tokenSweep.failed.filter((e) => keys.includes(e.key))).toEqual([])
      const subSweep = await backend.subscriptions(migrating).reencrypt()
      expect(subSweep.rewritten).toBeGreaterThanOrEqual(1)
      for (const key of keys)
        expect(rotated.keyIdOf(await backend.readRaw('token', key))).toBe('k2')
      expect(rotated.keyIdOf(await backend.readRaw('subscription', sub))).toBe('k2')
      // Versions kept: a compare-and-set based on the read from before the sweep lands.
      const after = await Promise.all(keys.map((k) => store.get(k)))
      expect(after.map((r) => r?.version)).toEqual(before.map((r) => r?.version))
      expect(after.map((r) => r?.refreshToken)).toEqual(before.map((r) => r?.refreshToken))
      expect(await store.compareAndSet!(keys[0]!, tokens(), before[0]!.version)).toBe(true)
      // Only the new key is needed now; a second sweep has nothing left to do for these.
      const onlyNew = createCredentialCipher({ keys: { k2 }, current: 'k2', plaintext: 'refuse' })
      for (const key of keys)
        expect((await backend.tokens(onlyNew).get(key))?.tokenType).toBe('bearer')
      expect((await backend.subscriptions(onlyNew).get(sub))?.active).toBe(true)
    })

    it('a sealed record of the old connection written back raw after a reconnection as another account (a restored backup) is refused as rolled back, never used', async () => {
      const key = unique('rolled-back')
      const store = backend.tokens(first)
      const manager = createTokenManager({
        store,
        oauth: {
          refresh: () => Promise.reject(new Error('no refresh expected')),
        },
        revalidateMs: 0,
      })
      const asP = { ...tokens(), account: { id: 'acct_P' }, connection: newConnection() }
      await store.set(key, asP)
      expect(await manager.getAccessToken(key)).toBe(asP.accessToken)
      const backup = await backend.readRaw('token', key)
      const asQ = {
        ...tokens(),
        account: { id: 'acct_Q' },
        connection: newConnection(asP.connection),
      }
      await store.set(key, asQ)
      expect(await manager.getAccessToken(key)).toBe(asQ.accessToken)
      await backend.writeRaw('token', key, backup)
      // The store opens it (it is sealed under a key the cipher has, for this key) ...
      expect((await store.get(key))?.accessToken).toBe(asP.accessToken)
      // ... the manager that used Q's connection refuses it, without a token in the message.
      const refusal = await manager.getAccessToken(key).then(
        () => undefined,
        (error: Error & { code?: string }) => error,
      )
      expect(refusal?.code).toBe('not_connected')
      expect(refusal?.message).toMatch(/rolled back/)
      expect(revealed(refusal?.message ?? '', [asP.accessToken, asP.refreshToken])).toEqual([])
      await manager.close()
    })

    it('a planted plaintext record is refused by default: its own code, not "no record", for tokens and subscriptions', async () => {
      const key = unique('strict')
      await backend.tokens().set(key, tokens())
      expect(await codeOf(backend.tokens(first).get(key))).toBe('credential_plaintext')
      const strict = createCredentialCipher({ keys: { k1 }, current: 'k1', plaintext: 'refuse' })
      expect(await codeOf(backend.tokens(strict).get(key))).toBe('credential_plaintext')
      // A subscription row with a secret the planter knows: never used to verify deliveries.
      const planted = unique('planted-sub')
      const record = subscription()
      await backend.subscriptions().compareAndSet(planted, record, undefined)
      expect(await codeOf(backend.subscriptions(first).get(planted))).toBe('credential_plaintext')
      expect(await codeOf(backend.subscriptions(first).findByWebhook(record.webhooks[0]!.id))).toBe(
        'credential_plaintext',
      )
    })
  })
}

/** What `raceWhileSweeping` saw. */
export interface SweptRace<R> {
  report: R
  /** Every failure of a sweep, or of `alongside`, in words. */
  problems: string[]
  /** Sweeps that finished during the race. */
  sweeps: number
}

/**
 * A race (`() => runRefreshRace(...)`) while `sweep` (a store's `reencrypt()`) runs over and
 * over beside it, each time followed by `alongside(i)` when given: a key rotation under live
 * traffic.
 */
export async function raceWhileSweeping<R>(
  race: () => Promise<R>,
  sweep: () => Promise<{ failed: readonly unknown[] }>,
  alongside?: (i: number) => Promise<void>,
): Promise<SweptRace<R>> {
  const problems: string[] = []
  let sweeps = 0
  let done = false
  const background = (async () => {
    for (let i = 0; !done; i++) {
      try {
        const result = await sweep()
        if (result.failed.length > 0) problems.push(result.failed.map(String).join('; '))
        sweeps++
        await alongside?.(i)
      } catch (error) {
        problems.push(String(error))
      }
      await new Promise((r) => setTimeout(r, 20))
    }
  })()
  const report = await race().finally(() => {
    done = true
  })
  await background
  return { report, problems, sweeps }
}
