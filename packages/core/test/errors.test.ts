import { describe, expect, it } from 'vitest'
import {
  ConfigError,
  isSchedulingError,
  isWebhookError,
  SchedulingError,
  WEBHOOK_ERROR_STATUS,
  WebhookError,
} from '../src/errors.js'

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
