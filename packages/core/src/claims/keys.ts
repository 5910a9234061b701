// The keys deliveries are claimed under (the dedupe store's, the ledger's).

/**
 * The dedupe key of a connected account's delivery: the account and the payload id, so one
 * occurrence sent to two webhooks of the account (during a rotation) runs its handlers once,
 * and two accounts that both receive one payload id each run theirs. Length-prefixed: no
 * account key can make two pairs collide.
 */
export const accountKey = (account: string, payloadId: string) =>
  `account:${account.length}:${account}:${payloadId}`
