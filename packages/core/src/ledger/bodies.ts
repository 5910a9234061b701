import type { CredentialCipher } from '../credentials/types.js'
import type { LedgerEntry } from './entry.js'

// The bodies a ledger keeps for replay: the verified bytes as text, sealed with the ledger's
// cipher when it has one (bound to the entry's id: a body moved to another entry does not
// open), until the retention's end.

/** The text kept for a delivery's body. */
export async function sealBody(
  cipher: CredentialCipher | undefined,
  id: string,
  text: string,
): Promise<string> {
  return cipher === undefined ? text : await cipher.seal(text, ['ledger', id])
}

/** A kept body's text, opened; `undefined` once it expired (or was purged). */
export async function openBody(
  cipher: CredentialCipher | undefined,
  entry: LedgerEntry,
  now: number,
): Promise<string | undefined> {
  if (entry.body === undefined || (entry.bodyExpiresAt ?? 0) <= now) return undefined
  if (cipher === undefined) return entry.body
  if (cipher.keyIdOf(entry.body) === undefined) {
    // Kept before the ledger had a cipher: read under the cipher's plaintext rule.
    cipher.readPlaintext(['ledger', entry.id], 'delivery body')
    return entry.body
  }
  return (await cipher.open(entry.body, ['ledger', entry.id])).plaintext
}
