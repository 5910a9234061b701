import { describe, expect, it } from 'vitest'
import {
  actionFor,
  type TokenEvent,
  type TokenState,
  type TokenStatus,
  transition,
} from '../../src/tokens/machine.js'

// Times: refresh due at 200, expiry at 300 (or 700 / 800 for the late tick).
const at = (now: number) => ({ now, refreshAt: 200, expiresAt: 300 })
const events: Record<string, TokenEvent> = {
  'tick fresh': { type: 'tick', ...at(100) },
  'tick expiring': { type: 'tick', ...at(250) },
  'tick expired': { type: 'tick', ...at(350) },
  'tick after retryAt': { type: 'tick', now: 600, refreshAt: 700, expiresAt: 800 },
  started: { type: 'refresh_started' },
  succeeded: { type: 'refresh_succeeded', ...at(100) },
  invalid_grant: { type: 'refresh_failed', reason: 'invalid_grant' },
  transient: { type: 'refresh_failed', reason: 'transient', retryAt: 999 },
  replaced: { type: 'record_replaced', reauthorizationRequired: false, ...at(100) },
  'replaced, reauth': { type: 'record_replaced', reauthorizationRequired: true, ...at(100) },
}

const states: Record<string, TokenState> = {
  fresh: { status: 'fresh', failures: 0 },
  expiring: { status: 'expiring', failures: 0 },
  expired: { status: 'expired', failures: 0 },
  refreshing: { status: 'refreshing', failures: 1 },
  retry_wait: { status: 'retry_wait', failures: 2, retryAt: 500 },
  reauth: { status: 'reauthorization_required', failures: 0 },
}

type Expected = [TokenStatus, number, number?]
const byTime: Expected[] = [
  ['fresh', 0],
  ['expiring', 0],
  ['expired', 0],
  ['fresh', 0],
]
const common = (failures: number): Expected[] => [
  ['refreshing', failures],
  ['fresh', 0],
  ['reauthorization_required', 0],
  ['retry_wait', failures + 1, 999],
  ['fresh', 0],
  ['reauthorization_required', 0],
]

// Rows: states; columns: the events above, in order. Written out by hand, not derived.
const table: Record<string, Expected[]> = {
  fresh: [...byTime, ...common(0)],
  expiring: [...byTime, ...common(0)],
  expired: [...byTime, ...common(0)],
  refreshing: [
    ['refreshing', 1],
    ['refreshing', 1],
    ['refreshing', 1],
    ['refreshing', 1],
    ...common(1),
  ],
  retry_wait: [
    ['retry_wait', 2, 500],
    ['retry_wait', 2, 500],
    ['retry_wait', 2, 500],
    ['fresh', 2],
    ...common(2),
  ],
  reauth: [
    ['reauthorization_required', 0],
    ['reauthorization_required', 0],
    ['reauthorization_required', 0],
    ['reauthorization_required', 0],
    ['reauthorization_required', 0],
    ['reauthorization_required', 0],
    ['reauthorization_required', 0],
    ['reauthorization_required', 0],
    ['fresh', 0],
    ['reauthorization_required', 0],
  ],
}

const cases = Object.entries(table).flatMap(([state, row]) =>
  Object.keys(events).map((event, i) => [state, event, row[i]!] as const),
)

describe('token state machine', () => {
  it('has a row for every state and a column for every event', () => {
    expect(cases).toHaveLength(6 * 10)
    for (const row of Object.values(table)) expect(row).toHaveLength(10)
  })

  it.each(cases)('%s + %s', (state, event, [status, failures, retryAt]) => {
    const before = Object.freeze({ ...states[state]! })
    const next = transition(before, Object.freeze(events[event]!))
    expect(next.status).toBe(status)
    expect(next.failures).toBe(failures)
    if (status === 'retry_wait') expect(next.retryAt).toBe(retryAt)
  })

  it.each([
    ['fresh', 'use'],
    ['expiring', 'refresh'],
    ['expired', 'refresh'],
    ['refreshing', 'refresh'],
    ['retry_wait', 'hold'],
    ['reauth', 'reauthorize'],
  ] as const)('acts on %s by %s', (state, action) => {
    expect(actionFor(states[state]!)).toBe(action)
  })
})
