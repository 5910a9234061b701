// The keys deliveries are claimed under (the dedupe store's, the ledger's).

/**
 * The dedupe key of a connected account's delivery: the account and the payload id, so one
 * occurrence sent to two webhooks of the account (during a rotation) runs its handlers once,
 * and two accounts that both receive one payload id each run theirs. Length-prefixed: no
 * account key can make two pairs collide.
 */
export const accountKey = (account: string, payloadId: string) =>
  `account:${account.length}:${account}:${payloadId}`

/**
 * The account a dedupe key was made under (`accountKey`), or `undefined` for a key of no
 * account (a payload id alone) or one that is not well formed.
 */
export function accountOfKey(key: string): string | undefined {
  if (!key.startsWith('account:')) return undefined
  const colon = key.indexOf(':', 8)
  const length = Number(key.slice(8, colon))
  if (colon < 0 || !/^\d+$/.test(key.slice(8, colon)) || key[colon + 1 + length] !== ':')
    return undefined
  return key.slice(colon + 1, colon + 1 + length)
}

/**
 * The dedupe key of a delivery of no account verified by a secret lookup: the identity of its
 * webhook's current secret (32 hex digits, `SecretIdentities`) and the payload id, so a retry
 * signed with the other secret of a rotation is the same delivery.
 */
export const identityKey = (identity: string, payloadId: string) => `${identity}:${payloadId}`

const IDENTITY_KEY = /^[0-9a-f]{32}:/

/** The identity a key was made under (`identityKey`), or `undefined`. */
export const identityOfKey = (key: string): string | undefined =>
  IDENTITY_KEY.test(key) ? key.slice(0, 32) : undefined

/**
 * What a key is scoped by: its account (`accountKey`), else its webhook's identity
 * (`identityKey`), else nothing. A store may keep the keys of one scope together (the Redis
 * ledger's shards do), so deliveries of no account spread by their webhook.
 */
export const scopeOfKey = (key: string): string | undefined =>
  accountOfKey(key) ?? identityOfKey(key)

/**
 * Another id (a payload's, a resource's) under the scope of a delivery: its account's, else the
 * identity its key was made under, else the id alone.
 */
export function keyInScopeOf(delivery: { account?: string | undefined; id: string }, id: string) {
  if (delivery.account !== undefined) return accountKey(delivery.account, id)
  // The identity and its colon, as `identityKey` wrote them.
  return IDENTITY_KEY.test(delivery.id) ? delivery.id.slice(0, 33) + id : id
}
