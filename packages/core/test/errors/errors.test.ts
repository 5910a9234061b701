import { describe, expect, expectTypeOf, it } from 'vitest'
import {
  type ClientErrorCode,
  type ConfigErrorCode,
  OAUTH_FLOW_ERROR_STATUS,
  type OAuthFlowErrorCode,
  WEBHOOK_ERROR_STATUS,
  type WebhookErrorCode,
} from '../../src/errors/codes.js'
import { isOAuthFlowError, OAuthFlowError } from '../../src/errors/connection.js'
import {
  ConfigError,
  isSchedulingError,
  isWebhookError,
  SchedulingError,
  serverText,
  WebhookError,
} from '../../src/errors/errors.js'
import { OAuthError } from '../../src/errors/transport.js'

describe('errors', () => {
  it('carry a code, the status of the status table, a name and a cause', () => {
    const cause = new Error('root')
    const error = new WebhookError('signature_invalid', 'nope', { cause })
    expect(error).toBeInstanceOf(SchedulingError)
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('WebhookError')
    expect(error.status).toBe(401)
    expect(error.cause).toBe(cause)
    expect(error.toJSON()).toEqual({ error: { code: 'signature_invalid', message: 'nope' } })
    expect(new ConfigError('x').code).toBe('invalid_options')
  })

  it('map every code to the status DESIGN.md gives', () => {
    expect(WEBHOOK_ERROR_STATUS).toMatchObject({
      method_not_allowed: 405,
      unsupported_media_type: 415,
      payload_too_large: 413,
      signature_missing: 401,
      signature_invalid: 401,
      invalid_json: 400,
      invalid_envelope: 400,
      handler_failed: 500,
      queue_rejected: 503,
    })
  })

  it('are recognised by brand, also when thrown by another copy of the package', () => {
    const foreign = Object.assign(new Error('x'), {
      code: 'signature_invalid',
      [Symbol.for('scheduling-kit.error')]: true,
    })
    expect(isSchedulingError(foreign)).toBe(true)
    expect(isWebhookError(foreign, 'signature_invalid')).toBe(true)
    expect(isWebhookError(foreign, 'invalid_json')).toBe(false)
    expect(isSchedulingError(new Error('x'))).toBe(false)
    expect(isSchedulingError({ code: 'x' })).toBe(false)
    expect(isWebhookError(new ConfigError('x'))).toBe(false)
  })
})

describe('serverText', () => {
  it('strips control and direction characters, collapses white space, and caps the length', () => {
    expect(serverText('bad\r\nX-Forged: 1\u001b[31m\u202eevil')).toBe('bad X-Forged: 1 [31m evil')
    expect(serverText('x'.repeat(5000))).toHaveLength(200)
    expect(serverText('😀'.repeat(300), 11)).toBe(`${'😀'.repeat(5)}…`)
    expect(serverText('😀'.repeat(300), 12)).toBe(`${'😀'.repeat(5)}…`)
  })

  it('OAuthError keeps only the cleaned, capped text, in its message and its fields', () => {
    const error = new OAuthError(
      400,
      'invalid_grant\r\n',
      `${'A'.repeat(3000)}\n[ERROR] forged`,
      'Token refresh',
    )
    expect(error.error).toBe('invalid_grant')
    expect(error.errorDescription!.length).toBeLessThanOrEqual(200)
    expect(error.message).not.toMatch(/[\r\n]/)
    expect(error.message.length).toBeLessThan(300)
  })
})

describe('one code, one class', () => {
  const webhookCodes = Object.keys(WEBHOOK_ERROR_STATUS) as WebhookErrorCode[]
  const flowCodes = Object.keys(OAUTH_FLOW_ERROR_STATUS) as OAuthFlowErrorCode[]
  const clientCodes: ClientErrorCode[] = [
    'oauth_error',
    'network_error',
    'timeout',
    'invalid_response',
    'api_error',
    'not_connected',
    'reauthorization_required',
    'stale_write',
  ]

  it('no code is in two tables', () => {
    const all = [...webhookCodes, ...flowCodes, ...clientCodes, 'invalid_options']
    expect(new Set(all).size).toBe(all.length)
  })

  it('the guards answer for their own class only, whatever the code', () => {
    for (const code of flowCodes) {
      const error = new OAuthFlowError(code, 'x')
      expect(isWebhookError(error)).toBe(false)
      expect(isOAuthFlowError(error, code)).toBe(true)
    }
    for (const code of webhookCodes) {
      const error = new WebhookError(code, 'x')
      expect(isOAuthFlowError(error)).toBe(false)
      expect(isWebhookError(error, code)).toBe(true)
    }
    // A code that is only a property every object inherits is no code of either table.
    for (const code of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      const odd = new SchedulingError(code, 'x')
      expect(isWebhookError(odd)).toBe(false)
      expect(isOAuthFlowError(odd)).toBe(false)
    }
  })

  it('types: the code unions do not overlap', () => {
    type Overlap =
      | Extract<WebhookErrorCode, OAuthFlowErrorCode | ClientErrorCode | ConfigErrorCode>
      | Extract<OAuthFlowErrorCode, ClientErrorCode | ConfigErrorCode>
      | Extract<ClientErrorCode, ConfigErrorCode>
    expectTypeOf<Overlap>().toEqualTypeOf<never>()
  })
})
