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
