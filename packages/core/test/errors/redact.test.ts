import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startTokenServer } from '@scheduling-kit/fake-auth'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createSchedulingClient } from '../../src/api/client.js'
import { REDACTED, redactText, redactValue } from '../../src/errors/redact.js'
import { describeError } from '../../src/log.js'
import { createOAuthClient } from '../../src/oauth/client.js'

// What a server quotes of a request never carries the request's credentials out: a token
// endpoint whose error_description echoes the refresh token and the client secret, and an API
// whose error body echoes the bearer token, over real HTTP; the messages, the errors' fields,
// and the text a log would print hold none of them.

const everything = (error: unknown) =>
  JSON.stringify({
    message: (error as Error).message,
    described: describeError(error),
    fields: { ...(error as object) },
  })

describe('credentials quoted back', () => {
  it('a token endpoint echoing the refresh token and the client secret in its error: neither reaches the error', async () => {
    const server = await startTokenServer()
    try {
      const granted = server.grant('acct_echo')
      const secret = server.clientSecret
      server.failNext({
        status: 400,
        body: {
          error: `invalid_grant ${granted.refresh_token}`,
          error_description: `refresh_token=${granted.refresh_token}&client_secret=${secret} was refused`,
        },
      })
      const oauth = createOAuthClient({
        clientId: server.clientId,
        clientSecret: secret,
        redirectUri: server.redirectUri,
        authUrl: server.url,
      })
      const error = await oauth.refresh(granted.refresh_token).catch((e: unknown) => e)
      expect((error as Error).message).toContain('was refused')
      expect((error as Error).message).toContain(REDACTED)
      const text = everything(error)
      expect(text).not.toContain(granted.refresh_token)
      expect(text).not.toContain(secret)
    } finally {
      await server.close()
    }
  })

  it("a successful answer is kept exactly: a new refresh token holding the old one's text is not touched", async () => {
    const oauth = createOAuthClient({
      clientId: 'c',
      clientSecret: 'client_secret_123',
      redirectUri: 'https://app.example.test/callback',
      authUrl: 'https://auth.example.test',
      fetch: async () =>
        Response.json({
          access_token: 'at_rt_old_12345_x',
          refresh_token: 'rt_old_123456',
          token_type: 'bearer',
          expires_in: 7200,
        }),
    })
    const tokens = await oauth.refresh('rt_old_12345')
    expect(tokens.refreshToken).toBe('rt_old_123456')
    expect(tokens.accessToken).toBe('at_rt_old_12345_x')
  })

  it('an API echoing the bearer token in a 422 body: not in the error, its fields or its body', async () => {
    const token = 'pat_live_echoed_secret_123'
    const api = createServer((req, res) => {
      const auth = req.headers.authorization ?? ''
      res.writeHead(422, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          errors: { url: [`not allowed for ${auth}`] },
          echo: { [auth]: auth, nested: [auth] },
        }),
      )
    })
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve))
    try {
      const base = `http://127.0.0.1:${(api.address() as AddressInfo).port}/v1`
      const client = createSchedulingClient({ baseUrl: base, token, retry: { attempts: 1 } })
      const error = await client.webhooks
        .create({ url: 'https://app.example.test/h' })
        .catch((e: unknown) => e)
      expect((error as { fields: Record<string, string[]> }).fields.url).toEqual([
        `not allowed for Bearer ${REDACTED}`,
      ])
      expect(everything(error)).not.toContain(token)
    } finally {
      api.close()
    }
  })

  it('property: no credential of at least 6 characters survives in text or a parsed body', () => {
    const credential = fc.string({ minLength: 6, maxLength: 40 })
    fc.assert(
      fc.property(
        fc.array(credential, { minLength: 1, maxLength: 3 }),
        fc.array(fc.string({ maxLength: 20 }), { maxLength: 6 }),
        (sent, parts) => {
          const text = parts.flatMap((p, i) => [p, sent[i % sent.length]!]).join('')
          const cleaned = redactText(text, sent)
          // None of the credentials is left whole, unless the marker itself spells it.
          for (const s of sent) if (!REDACTED.includes(s)) expect(cleaned.includes(s)).toBe(false)
          const body = redactValue({ [text]: [text, { deep: text }], n: 1 }, sent)
          const json = JSON.stringify(body)
          for (const s of sent)
            if (!REDACTED.includes(s) && !JSON.stringify(REDACTED).includes(s))
              expect(json.includes(JSON.stringify(s).slice(1, -1))).toBe(false)
        },
      ),
    )
  })
})
