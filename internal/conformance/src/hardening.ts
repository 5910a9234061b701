import { MemoryDedupeStore, signPayload } from '@scheduling-kit/core'
import { describe, expect, it } from 'vitest'
import { SECRET, type SuiteContext } from './context.js'
import type { AdapterHarness } from './harness.js'
import { deliver, envelope, rawExchange, stalledRequest } from './http.js'

export const MiB = 1024 * 1024

/**
 * Signature headers whose white-space trim, written as a regular expression, backtracks
 * quadratically: a megabyte of spaces or tabs with one more character. Answered at once now.
 */
export const HOSTILE_SIGNATURES = [
  `sha256=${' '.repeat(MiB)}x`,
  `sha256=${'\t'.repeat(MiB)}x`,
  `sha256=${' \t'.repeat(MiB / 2)}x`,
  `x${' '.repeat(MiB)}x`,
  `sha256=${'a'.repeat(MiB)}`,
]

/** Characters no log line, message or page may carry from a sender (line breaks aside, ours). */
export const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u

/** The value of a signed cookie as JSON (its payload is base64url JSON before the dot). */
export function cookiePayload(setCookie: string): Record<string, unknown> {
  const value = setCookie.slice(setCookie.indexOf('=') + 1).split(';', 1)[0]!
  return JSON.parse(Buffer.from(value.split('.')[0]!, 'base64url').toString('utf8'))
}

/** A `Cookie` header of these pairs, in this order. */
export const cookies = (...pairs: string[]) => pairs.filter((p) => p !== '').join('; ')

/** The `name=value` of the one Set-Cookie whose name ends with `suffix`. */
export function setCookiePair(headers: Headers, suffix: string): string {
  const found = headers
    .getSetCookie()
    .map((c) => c.split(';', 1)[0]!)
    .find((c) => c.split('=', 1)[0]!.endsWith(suffix) && !c.endsWith('='))
  expect(found, `a Set-Cookie named *${suffix}`).toBeDefined()
  return found!
}

export function defineHardeningCases(harness: AdapterHarness, ctx: SuiteContext): void {
  oversizeHardening(harness, ctx)
  replayHardening(harness, ctx)
  bytesAndTextHardening(harness, ctx)
}

function oversizeHardening(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx
  const middlewareFirst =
    harness.parsers.find((p) => !harness.parserFirst.includes(p)) ?? ctx.defaultParser

  describe(`${harness.name}: hardening`, () => {
    it('a 1 MiB signature header of spaces or tabs and one more character is answered 401 at once, and the next delivery 200', async () => {
      const app = await start({ parser: middlewareFirst })
      const body = envelope()
      for (const signature of HOSTILE_SIGNATURES) {
        const res = await rawExchange(
          app.hook,
          ['content-type: application/json', `x-service-signature: ${signature}`],
          body,
        )
        expect(res.status, signature.slice(0, 12)).toBe(401)
        expect(res.response).toContain('signature_invalid')
      }
      // A megabyte of leading white space before a valid signature: HTTP's optional white
      // space, dropped (by the server's parser or by core), and the delivery verifies.
      const leading = await rawExchange(
        app.hook,
        [
          'content-type: application/json',
          `x-service-signature: ${' \t'.repeat(MiB / 2)}${await signPayload(body, SECRET)}`,
        ],
        body,
      )
      expect(leading.status).toBe(200)
      expect(app.events).toHaveLength(1)
      const next = envelope()
      expect((await deliver(app.hook, next)).status).toBe(200)
      expect(app.events).toHaveLength(2)
    }, 120_000)

    it('other oversize headers are refused unread: a 1 MiB webhook id never reaches the secret lookup, a 1 MiB content type is 415', async () => {
      const asked: number[] = []
      const app = await start({
        parser: middlewareFirst,
        webhooks: {
          secret: (id) => {
            asked.push(id?.length ?? 0)
            return SECRET
          },
        },
      })
      const body = envelope()
      const signature = await signPayload(body, SECRET)
      const longId = await rawExchange(
        app.hook,
        [
          'content-type: application/json',
          `x-service-signature: ${signature}`,
          `x-service-webhook-id: wh_${' '.repeat(MiB)}x`,
        ],
        body,
      )
      expect(longId.status).toBe(401)
      expect(longId.response).toContain('secret_unknown')
      expect(asked).toEqual([])
      const longType = await rawExchange(
        app.hook,
        [
          `content-type: application/json${' '.repeat(MiB)};charset=utf-8`,
          `x-service-signature: ${signature}`,
        ],
        body,
      )
      expect(longType.status).toBe(415)
      expect(app.events).toHaveLength(0)
    }, 120_000)

    it('bodies still arriving hold at most maxPendingBytes: past it, 503 server_busy without reading, and the budget comes back', async () => {
      const app = await start({
        parser: middlewareFirst,
        webhooks: { maxPendingBytes: 4096, bodyLimit: 2048, bodyTimeoutMs: 60_000 },
      })
      const { pathname, host } = new URL(app.hook)
      const head =
        `POST ${pathname} HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\n` +
        `x-service-signature: sha256=${'0'.repeat(64)}\r\ncontent-length: 2048\r\n\r\n`
      // Three stalled senders each declare 2 KiB: two fit, the third is refused at once.
      const stalled = [0, 1, 2].map(() => stalledRequest(app.hook, head, '{"type":', 3_000))
      const first = await Promise.race(stalled)
      expect(first.response).toMatch(/^HTTP\/1\.1 503/)
      expect(first.response).toContain('server_busy')
      expect(first.closed).toBe(true)
      // Full: a delivery is refused too, unread, and the service will deliver it again.
      const body = envelope()
      const busy = await deliver(app.hook, body)
      expect(busy.status).toBe(503)
      expect(busy.json.error?.code).toBe('server_busy')
      const all = await Promise.all(stalled)
      expect(all.filter((a) => a.response.startsWith('HTTP/1.1 503'))).toHaveLength(1)
      // The stalled senders gone, their bytes are given back.
      let status = 0
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = (await deliver(app.hook, body)).status
        if (status !== 200) await new Promise((r) => setTimeout(r, 50))
      }
      expect(status).toBe(200)
      expect(app.events).toHaveLength(1)
    }, 60_000)
  })
}

function replayHardening(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx
  describe(`${harness.name}: hardening`, () => {
    it('a secret lookup that ignores case or the id itself does not reopen replays: one run per payload and secret', async () => {
      const app = await start({
        webhooks: {
          // A case-insensitive lookup, as a `citext` column or a `_ci` collation answers.
          secret: (id) => (id?.trim().toLowerCase() === 'wh_tenant' ? SECRET : undefined),
        },
      })
      const body = envelope()
      expect((await deliver(app.hook, body, { webhookId: 'wh_tenant' })).status).toBe(200)
      for (const webhookId of ['WH_TENANT', 'Wh_Tenant', 'wh_TENANT', 'wH_tEnAnT']) {
        const replay = await deliver(app.hook, body, { webhookId })
        expect(replay.status, webhookId).toBe(200)
        expect(replay.json.duplicate, webhookId).toBe(true)
      }
      expect(app.events).toHaveLength(1)

      const ignoring = await start({ webhooks: { secret: () => SECRET } })
      for (let i = 0; i < 6; i++) {
        expect((await deliver(ignoring.hook, body, { webhookId: `wh_${i}` })).status).toBe(200)
      }
      expect(ignoring.events).toHaveLength(1)
    })
    it('one key per delivery across instances sharing a dedupe store; two webhooks (two secrets) sending one payload id both run', async () => {
      const dedupe = new MemoryDedupeStore()
      const other = 'conformance-secret-of-another-webhook'
      const lookup = (id: string | undefined) => (id === 'wh_b' ? other : SECRET)
      const one = await start({ webhooks: { secret: lookup, dedupe } })
      const two = await start({ webhooks: { secret: lookup, dedupe } })
      const body = envelope()
      expect((await deliver(one.hook, body, { webhookId: 'wh_a' })).status).toBe(200)
      const retry = await deliver(two.hook, body, { webhookId: 'WH_A' })
      expect(retry.json.duplicate).toBe(true)
      const otherWebhook = await deliver(two.hook, body, { webhookId: 'wh_b', secret: other })
      expect(otherWebhook.json.duplicate).toBeUndefined()
      expect(one.events.length + two.events.length).toBe(2)
    })
  })
}

function bytesAndTextHardening(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx
  const middlewareFirst =
    harness.parsers.find((p) => !harness.parserFirst.includes(p)) ?? ctx.defaultParser

  describe(`${harness.name}: hardening`, () => {
    it('bytes as received: a body whose invalid UTF-8 decodes to the signed text, at the same length, is never handled', async () => {
      // Signed: a literal U+FFFD (EF BF BD). Sent: a cut 4-byte sequence (F0 9F 98), which a
      // decoder turns into one U+FFFD: the same text, the same length, other bytes.
      const signed = Buffer.from(envelope('event.created', { note: 'x\uFFFDy' }))
      const at = signed.indexOf(Buffer.from([0xef, 0xbf, 0xbd]))
      const sent = Buffer.from(signed)
      sent.set([0xf0, 0x9f, 0x98], at)
      expect(sent.length).toBe(signed.length)
      expect(new TextDecoder().decode(sent)).toBe(new TextDecoder().decode(signed))
      const signature = await signPayload(signed, SECRET)
      for (const parser of harness.parsers) {
        const app = await start({ parser })
        const res = await deliver(app.hook, sent, { signature })
        expect(res.status, `${parser}: ${res.text}`).not.toBe(200)
        expect(app.events, parser).toHaveLength(0)
        if (harness.parserFirst.includes(parser) && res.status === 500) {
          expect(res.json.error?.code, parser).toBe('body_parsed')
        }
      }
    })

    it('no control, format or separator character a sender puts in the webhook id reaches a log line, onError or an answer', async () => {
      const app = await start({ parser: middlewareFirst, webhooks: { secret: () => undefined } })
      const messages: string[] = []
      // Sent as raw bytes: C1 controls (NEL, CSI), and the UTF-8 of bidi overrides, line
      // separators and zero-width characters (which Node reads as Latin-1, C1 bytes among them).
      const id =
        'wh_\x85\x9b2J\x9b31mred' +
        Buffer.from('\u202e\u2028\u200b\u2066\ufeff', 'utf8').toString('latin1')
      const body = envelope()
      const res = await rawExchange(
        app.hook,
        [
          'content-type: application/json',
          `x-service-signature: ${await signPayload(body, SECRET)}`,
          `x-service-webhook-id: ${id}`,
        ],
        body,
      )
      expect(res.status).toBe(401)
      const answerBody = res.response.slice(res.response.indexOf('\r\n\r\n') + 4)
      messages.push(JSON.parse(answerBody).error.message)
      messages.push(...app.logged)
      expect(app.errors).toContain('secret_unknown')
      expect(app.logged.join('\n')).toContain('secret_unknown')
      for (const message of messages) {
        for (const line of message.split('\n')) {
          expect(UNSAFE.test(line), JSON.stringify(line.slice(0, 120))).toBe(false)
        }
      }
    })
  })
}
