import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { escapingPath } from '../../../internal/conformance/src/escape.js'
import { readSignedCookie, signCookie } from '../src/oauth/cookies.js'
import { safeReturnTo } from '../src/oauth/redirect.js'
import { createOAuthRoutes } from '../src/oauth/routes.js'
import { MemoryTokenStore } from '../src/tokens/store.js'

describe('safeReturnTo', () => {
  it.each(['/', '/dashboard', '/a/b?c=1&d=%2F#top', '/caf%C3%A9'])(
    'keeps the same-site path %s',
    (path) => {
      expect(safeReturnTo(path)).toBe(path)
    },
  )

  it.each([
    'https://evil.test',
    '//evil.test',
    '/\\evil.test',
    '\\\\evil.test',
    'javascript:alert(1)',
    'evil.test',
    '/ok\r\nSet-Cookie: x=1',
    '/\t/evil.test',
    // They resolve to //evil.test once the browser removes dot segments.
    '/.//evil.test',
    '/a/..//evil.test',
    '/%2e//evil.test',
    '/%2E%2E//evil.test',
    '/.%2e//evil.test',
    '/a/b/%2e%2e/%2e%2e//evil.test',
    '/./\\evil.test',
    '',
    undefined,
    null,
  ])('refuses %j', (value) => {
    expect(safeReturnTo(value)).toBeUndefined()
  })

  it('property: whatever it keeps resolves to the same origin, on any base', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.webUrl(),
          fc.string().map((s) => `/${s}`),
        ),
        (input) => {
          const kept = safeReturnTo(input)
          if (kept === undefined) return
          for (const base of ['https://app.example.com', 'http://127.0.0.1:3000/deep/path']) {
            expect(new URL(kept, base).origin).toBe(new URL(base).origin)
          }
          expect(kept.startsWith('/')).toBe(true)
          expect(kept.startsWith('//')).toBe(false)
        },
      ),
      { numRuns: 3000 },
    )
  })
})

describe('safeReturnTo against paths built to escape', () => {
  const path = escapingPath()

  it('property: what it keeps is resolved, stays on the origin, and resolves to itself from any page', () => {
    fc.assert(
      fc.property(path, (input) => {
        const kept = safeReturnTo(input)
        if (kept === undefined) return
        expect(kept[0]).toBe('/')
        expect(/^\/[/\\]/.test(kept)).toBe(false)
        for (const page of [
          'https://app.example.com/',
          'https://app.example.com/auth/scheduling/callback',
          'http://127.0.0.1:3000/a/b/c/d',
        ]) {
          const resolved = new URL(kept, page)
          expect(resolved.origin).toBe(new URL(page).origin)
          expect(resolved.pathname + resolved.search + resolved.hash).toBe(kept)
        }
      }),
      { numRuns: 10_000 },
    )
  })
})

describe('signed cookies', () => {
  const secret = 'cookie-secret-0123456789abcdef'

  it('round-trip, and refuse any change, another secret or another cookie name', async () => {
    const value = await signCookie('a', { k: 'acct_1' }, secret)
    expect(await readSignedCookie('a', value, secret)).toEqual({ k: 'acct_1' })
    expect(await readSignedCookie('a', value, `${secret}x`)).toBeUndefined()
    expect(await readSignedCookie('b', value, secret)).toBeUndefined()
    const [payload, mac] = value.split('.')
    const other = await signCookie('a', { k: 'acct_2' }, secret)
    expect(await readSignedCookie('a', `${other.split('.')[0]}.${mac}`, secret)).toBeUndefined()
    expect(await readSignedCookie('a', `${payload}.`, secret)).toBeUndefined()
    expect(await readSignedCookie('a', payload, secret)).toBeUndefined()
    expect(await readSignedCookie('a', undefined, secret)).toBeUndefined()
  })
})

describe('createOAuthRoutes', () => {
  const base = {
    clientId: 'c',
    clientSecret: 's',
    redirectUri: 'https://app.test/auth/scheduling/callback',
    authUrl: 'https://auth.test',
    tokenStore: new MemoryTokenStore(),
  }

  it('warns once, without the secret, when no cookieSecret is given, and still works', async () => {
    const warn = vi.fn()
    const routes = createOAuthRoutes({ ...base, logger: { warn } })
    createOAuthRoutes({ ...base, logger: { warn } })
    expect(warn).toHaveBeenCalledOnce()
    expect(warn.mock.calls[0]![0]).toMatch(/cookieSecret/)
    const answer = await routes.handle({
      method: 'GET',
      path: '/login',
      headers: {},
      mountPath: '/auth/scheduling',
      raw: undefined,
    })
    expect(answer?.status).toBe(302)
    expect(String(answer?.headers['set-cookie'])).toMatch(/; Secure$/)
  })

  it('refuses a short cookieSecret and a store without the three methods', () => {
    expect(() => createOAuthRoutes({ ...base, cookieSecret: 'short' })).toThrow(/16 characters/)
    expect(() => createOAuthRoutes({ ...base, tokenStore: {} as never })).toThrow(/tokenStore/)
  })

  it('leaves paths that are not its own to the app', async () => {
    const routes = createOAuthRoutes({ ...base, cookieSecret: 'x'.repeat(32) })
    const request = { method: 'GET', headers: {}, mountPath: '', raw: undefined }
    expect(await routes.handle({ ...request, path: '/other' })).toBeUndefined()
    expect(await routes.handle({ ...request, path: '/login/extra' })).toBeUndefined()
  })
})
