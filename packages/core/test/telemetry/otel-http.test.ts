// The app's own HTTP spans: @opentelemetry/instrumentation-http records the callback's query
// (the authorization code, the state, the error description) on its server span unless told
// not to. With core's redactOAuthSpan as its requestHook, none of those values is in any span.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { redactOAuthUrl } from '../../src/telemetry/redact.js'

const SECRETS = ['CODE_SECRET_1', 'STATE_SECRET_2', 'WORDS_SECRET_3']

function spans(mode: 'plain' | 'redacted') {
  const run = spawnSync(
    process.execPath,
    [fileURLToPath(new URL('../fixtures/otel-http-child.cjs', import.meta.url)), mode],
    { encoding: 'utf8' },
  )
  expect(run.stderr).toBe('')
  return JSON.parse(run.stdout) as Array<{ kind: number; attributes: Record<string, unknown> }>
}

describe('redactOAuthSpan with the real @opentelemetry/instrumentation-http', () => {
  it('without it, the server span holds the code and the state (what users would ship)', () => {
    const text = JSON.stringify(spans('plain'))
    for (const secret of SECRETS) expect(text).toContain(secret)
  })

  it('with it as requestHook, no span holds the code, the state or the error description', () => {
    const all = spans('redacted')
    expect(all.length).toBeGreaterThanOrEqual(2) // the server span and the client span
    const text = JSON.stringify(all)
    for (const secret of SECRETS) expect(text).not.toContain(secret)
    // The rest of the address is kept: the path, and the parameters that are no secret.
    expect(text).toContain('/auth/scheduling/callback')
    expect(text).toContain('code=REDACTED')
    expect(text).toContain('iss=https%3A%2F%2Fauth.example.test')
  })
})

describe('redactOAuthUrl', () => {
  it.each([
    ['/cb?code=a&state=b', '/cb?code=REDACTED&state=REDACTED'],
    ['https://app.test/cb?x=1&code=a#frag', 'https://app.test/cb?x=1&code=REDACTED#frag'],
    ['code=a&state=b', 'code=REDACTED&state=REDACTED'],
    ['/cb?c%6Fde=a', '/cb?c%6Fde=REDACTED'],
    ['/cb?codes=a', '/cb?codes=a'],
    ['/plain/path', '/plain/path'],
    [
      '/cb?error=access_denied&error_description=why',
      '/cb?error=access_denied&error_description=REDACTED',
    ],
  ])('%s -> %s', (input, output) => {
    expect(redactOAuthUrl(input)).toBe(output)
  })
})
