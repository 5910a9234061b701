import { createHmac, randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { cipherWith } from '../../src/credentials/cipher.js'
import { nodeAesGcm } from '../../src/crypto/node.js'
import { webAesGcm } from '../../src/crypto/web.js'
import type { CredentialError } from '../../src/errors/store.js'
import {
  createCredentialCipher,
  createOAuthClient,
  createTokenManager,
  createWebhookHandler,
  createWebhookSubscriptions,
  encryptSubscriptionStore,
  encryptTokenStore,
  generateCredentialKey,
  isSchedulingError,
  isSealedCredential,
  MemorySubscriptionStore,
  MemoryTokenStore,
  type SubscriptionRecord,
  type TokenRecord,
  type TokenStore,
} from '../../src/index.js'

const k1 = generateCredentialKey()
const k2 = generateCredentialKey()
const cipher = createCredentialCipher({ keys: { k1 }, current: 'k1' })
const silent = { debug() {}, info() {}, warn() {}, error() {} }

/** The code a rejected promise carries (a CredentialError's), or what it resolved to. */
async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'opened'
  } catch (error) {
    if (!isSchedulingError(error)) throw error
    return error.code
  }
}

function tokens(overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    accessToken: `at_${randomBytes(12).toString('hex')}`,
    refreshToken: `rt_${randomBytes(12).toString('hex')}`,
    expiresAt: Date.now() + 7_200_000,
    obtainedAt: Date.now(),
    tokenType: 'bearer',
    account: { id: 'acct_1' },
    ...overrides,
  }
}

describe('createCredentialCipher', () => {
  it('seals with a fresh IV each time, names its key id, and opens only for the same context', async () => {
    const a = await cipher.seal('secret text', ['token', 'acct_1'])
    const b = await cipher.seal('secret text', ['token', 'acct_1'])
    expect(a).not.toBe(b)
    expect(a).toMatch(
      /^skc1\.k1\.[0-9a-f]{8}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/,
    )
    expect(a).not.toContain('secret')
    expect(isSealedCredential(a)).toBe(true)
    expect(cipher.keyIdOf(a)).toBe('k1')
    expect(cipher.keyIdOf('{"accessToken":"x"}')).toBeUndefined()
    expect(await cipher.open(a, ['token', 'acct_1'])).toEqual({
      plaintext: 'secret text',
      keyId: 'k1',
    })
    expect(await outcome(cipher.open(a, ['token', 'acct_2']))).toBe('credential_mismatch')
    expect(await outcome(cipher.open(a, ['subscription', 'acct_1']))).toBe('credential_mismatch')
    // The refusal names the key id the copy was sealed under, and the store key it was read as.
    const refused = await cipher.open(a, ['token', 'acct_2']).catch((e: CredentialError) => e)
    expect(refused).toMatchObject({ code: 'credential_mismatch', keyId: 'k1', key: 'acct_2' })
    expect((refused as Error).message).toContain('key id "k1"')
  })

  it('refuses each kind of bad envelope with its own code, naming the key id and the store key', async () => {
    const sealed = await cipher.seal('{"refreshToken":"rt_x"}', ['token', 'acct_1'])
    const parts = sealed.split('.')
    const flip = (text: string, i: number) =>
      text.slice(0, i) + (text[i] === 'A' ? 'B' : 'A') + text.slice(i + 1)
    const cases: Array<[string, string]> = [
      [parts.slice(0, 5).join('.'), 'credential_malformed'], // tag dropped
      [[...parts.slice(0, 5), ''].join('.'), 'credential_malformed'], // tag emptied
      [[...parts.slice(0, 4), flip(parts[4]!, 0), parts[5]].join('.'), 'credential_tampered'],
      [
        [...parts.slice(0, 3), flip(parts[3]!, 2), ...parts.slice(4)].join('.'),
        'credential_tampered',
      ],
      [[...parts.slice(0, 5), flip(parts[5]!, 3)].join('.'), 'credential_tampered'],
      [['skc1', 'k9', ...parts.slice(2)].join('.'), 'credential_key_unknown'],
      [['skc2', ...parts.slice(1)].join('.'), 'credential_malformed'],
    ]
    for (const [value, code] of cases) {
      const error = await cipher.open(value, ['token', 'acct_1']).catch((e: unknown) => e)
      expect(isSchedulingError(error) && error.code, value).toBe(code)
      expect((error as Error).message).toContain('"acct_1"')
      expect((error as Error).message).not.toContain(k1)
      if (code !== 'credential_malformed')
        expect((error as { keyId?: string }).keyId).toMatch(/^k[19]$/)
    }
    // The same id on another key: the tag does not authenticate.
    const impostor = createCredentialCipher({ keys: { k1: k2 }, current: 'k1' })
    expect(await outcome(impostor.open(sealed, ['token', 'acct_1']))).toBe('credential_tampered')
  })

  it('a record copied onto another key whose context check collides is still refused: the key itself is authenticated', async () => {
    // The check is 32 bits of FNV-1a, for telling errors apart: collisions are easy to find.
    const fnv = (text: string) => {
      let hash = 0x811c9dc5
      for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
      return hash >>> 0
    }
    const seen = new Map<number, string>()
    let pair: [string, string] | undefined
    for (let n = 0; pair === undefined; n++) {
      const key = `acct_${n}`
      const hash = fnv(JSON.stringify(['token', key]))
      const earlier = seen.get(hash)
      if (earlier !== undefined) pair = [earlier, key]
      seen.set(hash, key)
    }
    const [a, b] = pair
    const theirs = await cipher.seal('{"accessToken":"at_a"}', ['token', a])
    expect(theirs.split('.')[2]).toBe((await cipher.seal('', ['token', b])).split('.')[2])
    expect(await outcome(cipher.open(theirs, ['token', b]))).toBe('credential_tampered')
  })

  it('property: no change to a sealed value opens, and every refusal is a CredentialError', async () => {
    const sealed = await cipher.seal('{"accessToken":"at_1","refreshToken":"rt_1"}', ['token', 'k'])
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.'
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            at: fc.nat({ max: sealed.length }),
            op: fc.constantFrom('replace', 'delete', 'insert'),
            char: fc.constantFrom(...alphabet),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        async (edits) => {
          let value = sealed
          for (const { at, op, char } of edits) {
            const i = Math.min(at, value.length)
            if (op === 'delete') value = value.slice(0, i) + value.slice(i + 1)
            else if (op === 'insert') value = value.slice(0, i) + char + value.slice(i)
            else value = value.slice(0, i) + char + value.slice(i + 1)
          }
          const result = await outcome(cipher.open(value, ['token', 'k']))
          if (value === sealed) expect(result).toBe('opened')
          else expect(result).toMatch(/^credential_(malformed|tampered|mismatch|key_unknown)$/)
        },
      ),
      { numRuns: 2_000 },
    )
  })

  it('property: a value sealed for one key never opens for another, lone surrogates included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', maxLength: 12 }),
        fc.string({ unit: 'binary', maxLength: 12 }),
        async (a, b) => {
          fc.pre(a !== b)
          const sealed = await cipher.seal('x', ['token', a])
          expect(await outcome(cipher.open(sealed, ['token', b]))).not.toBe('opened')
          expect((await cipher.open(sealed, ['token', a])).plaintext).toBe('x')
        },
      ),
      { numRuns: 300 },
    )
  })

  it('node:crypto and Web Crypto write the same envelope: each opens what the other sealed', async () => {
    const options = { keys: { k1, k2 }, current: 'k2' }
    const node = cipherWith(nodeAesGcm, options)
    const web = cipherWith(webAesGcm, options)
    for (const text of ['', 'é ✓ 😀', 'x'.repeat(5_000)]) {
      expect((await web.open(await node.seal(text, ['t', 'a']), ['t', 'a'])).plaintext).toBe(text)
      expect((await node.open(await web.seal(text, ['t', 'a']), ['t', 'a'])).plaintext).toBe(text)
    }
    const sealed = await node.seal('y', ['t', 'a'])
    const changed = `${sealed.slice(0, -3)}${sealed.at(-3) === 'A' ? 'B' : 'A'}${sealed.slice(-2)}`
    expect(await outcome(web.open(changed, ['t', 'a']))).toBe('credential_tampered')
    expect(await outcome(node.open(changed, ['t', 'a']))).toBe('credential_tampered')
  })

  it('takes a key as base64, base64url, hex or bytes; refuses anything else without echoing it', async () => {
    const bytes = randomBytes(32)
    const forms = [
      bytes.toString('base64'),
      bytes.toString('base64url'),
      bytes.toString('hex'),
      new Uint8Array(bytes),
    ]
    const sealed = await createCredentialCipher({ keys: { a: forms[0]! }, current: 'a' }).seal(
      'v',
      ['c'],
    )
    for (const form of forms) {
      const other = createCredentialCipher({ keys: { a: form }, current: 'a' })
      expect((await other.open(sealed, ['c'])).plaintext).toBe('v')
    }
    const short = randomBytes(16).toString('base64')
    expect(() => createCredentialCipher({ keys: { a: short }, current: 'a' })).toThrow(
      /key "a" must be 32 random bytes/,
    )
    try {
      createCredentialCipher({ keys: { a: short }, current: 'a' })
    } catch (error) {
      expect(String((error as Error).message)).not.toContain(short)
    }
    expect(() => createCredentialCipher({ keys: { 'a.b': k1 }, current: 'a.b' })).toThrow(/key id/)
    expect(() => createCredentialCipher({ keys: { a: k1 }, current: 'b' })).toThrow(
      /current must name one of the keys \(a\)/,
    )
    expect(() => createCredentialCipher({} as never)).toThrow(/pass \{ keys/)
    expect(() => new MemoryTokenStore({ cipher: {} as never })).toThrow(/createCredentialCipher/)
  })
})

describe('stores with a cipher', () => {
  it('MemoryTokenStore keeps sealed records; a token manager works over it as over a plain one', async () => {
    const store = new MemoryTokenStore({ cipher })
    const record = tokens()
    await store.set('acct_1', record)
    expect(await store.get('acct_1')).toEqual({ ...record, version: 1 })
    expect(await store.compareAndSet('acct_1', tokens(), 0)).toBe(false)
    expect(await store.compareAndSet('acct_1', tokens({ accessToken: 'at_2' }), 1)).toBe(true)
    expect((await store.get('acct_1'))?.accessToken).toBe('at_2')
  })

  it('a record sealed with an older key is read, and sealed with the current key on its next write', async () => {
    const old = createCredentialCipher({ keys: { k1 }, current: 'k1' })
    const both = createCredentialCipher({ keys: { k1, k2 }, current: 'k2' })
    const seen: string[] = []
    const inner: TokenStore & { raw: Map<string, TokenRecord> } = {
      raw: new Map(),
      async get(key) {
        return this.raw.get(key)
      },
      async set(key, record) {
        seen.push(record.accessToken)
        this.raw.set(key, record)
      },
      async delete(key) {
        this.raw.delete(key)
      },
    }
    await encryptTokenStore(inner, old).set('acct_1', tokens({ accessToken: 'at_old' }))
    expect(old.keyIdOf(seen[0]!)).toBe('k1')
    const rotated = encryptTokenStore(inner, both)
    expect((await rotated.get('acct_1'))?.accessToken).toBe('at_old')
    await rotated.set('acct_1', tokens({ accessToken: 'at_new' }))
    expect(both.keyIdOf(seen[1]!)).toBe('k2')
    // The old cipher alone cannot read what the new key sealed: its own error, not "no record".
    expect(await outcome(encryptTokenStore(inner, old).get('acct_1'))).toBe(
      'credential_key_unknown',
    )
  })

  it('encryptTokenStore: plaintext records are refused by default, read and sealed on write in the migration mode', async () => {
    const inner = new MemoryTokenStore()
    await inner.set('acct_1', tokens({ accessToken: 'at_plain', refreshToken: 'rt_plain' }))
    // By default a plaintext row (planted by anyone who can write to the store) is refused.
    expect(await outcome(encryptTokenStore(inner, cipher).get('acct_1'))).toBe(
      'credential_plaintext',
    )
    const migrating = createCredentialCipher({
      keys: { k1 },
      current: 'k1',
      plaintext: 'accept',
      logger: silent,
    })
    const wrapped = encryptTokenStore(inner, migrating)
    expect(typeof wrapped.compareAndSet).toBe('function')
    expect(typeof wrapped.acquireLease).toBe('function')
    const read = await wrapped.get('acct_1')
    expect(read?.refreshToken).toBe('rt_plain')
    expect(
      await wrapped.compareAndSet!('acct_1', { ...read!, accessToken: 'at_next' }, read!.version),
    ).toBe(true)
    const raw = await inner.get('acct_1')
    expect(isSealedCredential(raw?.accessToken) && isSealedCredential(raw?.refreshToken)).toBe(true)
    expect(JSON.stringify(raw)).not.toMatch(/at_next|rt_plain/)
    // The two fields are bound to their names: swapping them is refused.
    await inner.set('acct_1', {
      ...raw!,
      accessToken: raw!.refreshToken,
      refreshToken: raw!.accessToken,
    })
    expect(await outcome(wrapped.get('acct_1'))).toBe('credential_mismatch')
    expect(migrating.plaintextReads).toBe(1)
    const strict = createCredentialCipher({ keys: { k1 }, current: 'k1', plaintext: 'refuse' })
    await inner.set('acct_2', tokens())
    expect(await outcome(encryptTokenStore(inner, strict).get('acct_2'))).toBe(
      'credential_plaintext',
    )
    // A store without the optional capabilities stays without them.
    const bare = encryptTokenStore(
      { get: async () => undefined, set: async () => {}, delete: async () => {} },
      cipher,
    )
    expect('compareAndSet' in bare || 'acquireLease' in bare).toBe(false)
  })

  it('encryptSubscriptionStore and MemorySubscriptionStore seal webhook secrets; the lookup opens them', async () => {
    const record: SubscriptionRecord = {
      active: true,
      updatedAt: 1,
      webhooks: [{ id: 'wh_1', secret: 'whsec_abc', url: 'https://app/webhooks', createdAt: 1 }],
    }
    for (const [store, inner] of [
      [new MemorySubscriptionStore({ cipher }), undefined],
      (() => {
        const inner = new MemorySubscriptionStore()
        return [encryptSubscriptionStore(inner, cipher), inner] as const
      })(),
    ] as const) {
      expect(await store.compareAndSet('acct_1', record, undefined)).toBe(true)
      expect((await store.findByWebhook('wh_1'))?.record.webhooks[0]?.secret).toBe('whsec_abc')
      expect((await store.get('acct_1'))?.webhooks[0]?.secret).toBe('whsec_abc')
      if (inner !== undefined) {
        const raw = await inner.get('acct_1')
        expect(JSON.stringify(raw)).not.toContain('whsec_abc')
        // A secret moved onto another webhook id is refused.
        const moved = { ...raw!, webhooks: [{ ...raw!.webhooks[0]!, id: 'wh_2' }] }
        expect(await inner.compareAndSet('acct_1', moved, raw!.version)).toBe(true)
        expect(await outcome(store.findByWebhook('wh_2'))).toBe('credential_tampered')
      }
    }
  })

  it('encryptSubscriptionStore binds the whole record: an edited state field is refused like tampering', async () => {
    const retired: SubscriptionRecord = {
      active: false,
      updatedAt: 1_000,
      webhooks: [
        {
          id: 'wh_old',
          secret: 'whsec_old',
          url: 'https://app.example.test/webhooks',
          createdAt: 1,
          removedAt: Date.now() - 10 * 86_400_000,
          gone: true,
        },
      ],
    }
    const edits: Array<[string, (r: SubscriptionRecord) => SubscriptionRecord]> = [
      ['active', (r) => ({ ...r, active: true })],
      ['updatedAt', (r) => ({ ...r, updatedAt: r.updatedAt + 1 })],
      ['removedAt', (r) => ({ ...r, webhooks: r.webhooks.map(({ removedAt: _, ...w }) => w) })],
      ['gone', (r) => ({ ...r, webhooks: r.webhooks.map(({ gone: _, ...w }) => w) })],
      [
        'url',
        (r) => ({ ...r, webhooks: r.webhooks.map((w) => ({ ...w, url: 'https://evil.test/' })) }),
      ],
      ['createdAt', (r) => ({ ...r, webhooks: r.webhooks.map((w) => ({ ...w, createdAt: 2 })) })],
    ]
    for (const [field, edit] of edits) {
      const inner = new MemorySubscriptionStore()
      const store = encryptSubscriptionStore(inner, cipher)
      expect(await store.compareAndSet('acct_1', retired, undefined)).toBe(true)
      expect((await store.get('acct_1'))?.webhooks[0]?.secret).toBe('whsec_old')
      const raw = (await inner.get('acct_1'))!
      expect(await inner.compareAndSet('acct_1', edit(raw), raw.version)).toBe(true)
      expect(await outcome(store.get('acct_1')), field).toBe('credential_tampered')
      expect(await outcome(store.findByWebhook('wh_old')), field).toBe('credential_tampered')
    }
  })

  it('a planted plaintext record is refused by every store by default: tokens and subscriptions, wrapped and native', async () => {
    const planted = tokens({ accessToken: 'at_attacker', refreshToken: 'rt_attacker' })
    const plain = new MemoryTokenStore()
    await plain.set('victim', planted)
    expect(await outcome(encryptTokenStore(plain, cipher).get('victim'))).toBe(
      'credential_plaintext',
    )
    const subscription: SubscriptionRecord = {
      active: true,
      updatedAt: 1,
      webhooks: [{ id: 'wh_p', secret: 'known-to-attacker', url: 'https://a/', createdAt: 1 }],
    }
    const inner = new MemorySubscriptionStore()
    await inner.compareAndSet('victim', subscription, undefined)
    const wrapped = encryptSubscriptionStore(inner, cipher)
    expect(await outcome(wrapped.findByWebhook('wh_p'))).toBe('credential_plaintext')
  })

  it('a record that cannot be opened is an error of its own for the token manager: not reauthorization, not "not connected"', async () => {
    const inner = new MemoryTokenStore()
    const sealedByOther = encryptTokenStore(
      inner,
      createCredentialCipher({ keys: { k9: k2 }, current: 'k9' }),
    )
    await sealedByOther.set('acct_1', tokens({ expiresAt: Date.now() - 1 }))
    const reauth: string[] = []
    const manager = createTokenManager({
      oauth: createOAuthClient({
        authUrl: 'http://127.0.0.1:9',
        clientId: 'c',
        clientSecret: 's',
        redirectUri: 'http://127.0.0.1:9/cb',
      }),
      store: encryptTokenStore(inner, cipher),
      onReauthorizationRequired: (key) => reauth.push(key),
    })
    const error = await manager.getAccessToken('acct_1').catch((e: unknown) => e)
    expect(isSchedulingError(error) && error.code).toBe('credential_key_unknown')
    expect((error as Error).message).toMatch(/"acct_1".*"k9"/)
    expect(reauth).toEqual([])
    expect(manager.state('acct_1').status).not.toBe('reauthorization_required')
    // The record is left as it was.
    expect((await inner.get('acct_1'))?.reauthorizationRequired).toBeUndefined()
  })
})

describe('deliveries over a sealed subscription store', () => {
  it('a webhook whose record cannot be opened is answered 500 (delivered again), told with its credential code; once the key is back it verifies', async () => {
    const inner = new MemorySubscriptionStore()
    const k9 = generateCredentialKey()
    const sealedBy = createCredentialCipher({ keys: { k9 }, current: 'k9' })
    const secret = 'whsec_sealed_1'
    await encryptSubscriptionStore(inner, sealedBy).compareAndSet(
      'acct_1',
      {
        active: true,
        updatedAt: 1,
        webhooks: [{ id: 'wh_1', secret, url: 'https://a/h', createdAt: 1 }],
      },
      undefined,
    )
    const handled: string[] = []
    const causes: unknown[] = []
    const handlerWith = (c: ReturnType<typeof createCredentialCipher>) =>
      createWebhookHandler({
        subscriptions: createWebhookSubscriptions({
          url: 'https://a/h',
          apiUrl: 'http://127.0.0.1:9',
          tokens: { getAccessToken: async () => 'unused' },
          store: encryptSubscriptionStore(inner, c),
          cacheMs: 0,
        }),
        onAny: (event) => void handled.push(event.id),
        onError: (error) => void causes.push(error.cause),
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      })
    const body = JSON.stringify({ type: 'event.created', id: 'payload_1', payload: { id: 'e' } })
    const request = {
      method: 'POST',
      path: '/webhooks/scheduling',
      headers: {
        'content-type': 'application/json',
        'x-service-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
        'x-service-webhook-id': 'wh_1',
      },
      body: new TextEncoder().encode(body),
    }
    const refused = await handlerWith(cipher).handle(request)
    expect(refused!.status).toBe(500)
    expect(refused!.body).not.toContain(secret)
    expect(isSchedulingError(causes[0]) && causes[0].code).toBe('credential_key_unknown')
    expect(handled).toEqual([])
    const both = createCredentialCipher({ keys: { k1, k9 }, current: 'k1' })
    expect((await handlerWith(both).handle(request))!.status).toBe(200)
    expect(handled).toEqual(['payload_1'])
  })
})
