// The keys deliveries are claimed under, and the scope a store may keep together by: an
// account's keys name it, a secret lookup's name their webhook's identity, and neither is
// mistaken for the other or for a bare payload id.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  accountKey,
  accountOfKey,
  identityKey,
  identityOfKey,
  keyInScopeOf,
  scopeOfKey,
} from '../../src/claims/keys.js'

const identity = fc.stringMatching(/^[0-9a-f]{32}$/)

describe('the scope of a key', () => {
  it('property: an account key is scoped by its account, an identity key by its identity, another id by nothing', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), identity, (account, id, webhook) => {
        expect(scopeOfKey(accountKey(account, id))).toBe(account)
        expect(scopeOfKey(identityKey(webhook, id))).toBe(webhook)
        expect(accountOfKey(identityKey(webhook, id))).toBeUndefined()
        expect(identityOfKey(accountKey(account, id))).toBeUndefined()
        if (!/^[0-9a-f]{32}:/.test(id) && !id.startsWith('account:'))
          expect(scopeOfKey(id)).toBeUndefined()
      }),
    )
  })

  it("property: another id under a delivery's scope lands in the same scope", () => {
    fc.assert(
      fc.property(
        fc.option(fc.string(), { nil: undefined }),
        identity,
        fc.string(),
        fc.string(),
        (account, webhook, payload, resource) => {
          const id =
            account === undefined ? identityKey(webhook, payload) : accountKey(account, payload)
          const key = keyInScopeOf({ account, id }, resource)
          expect(scopeOfKey(key)).toBe(account ?? webhook)
          expect(key.endsWith(resource)).toBe(true)
        },
      ),
    )
  })

  it('a payload id alone (one static secret) stays itself: the keys and marks of every ledger before', () => {
    expect(keyInScopeOf({ id: 'payload_1' }, 'event_1')).toBe('event_1')
    expect(keyInScopeOf({ account: 'acct', id: accountKey('acct', 'payload_1') }, 'event_1')).toBe(
      accountKey('acct', 'event_1'),
    )
  })
})
