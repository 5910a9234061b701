import type { LedgerPurge, LedgerPurged } from '@scheduling-kit/core'
import type { LedgerKeys } from './ledger-keys.js'
import bodyDrop from './lua/ledger/body-drop.lua'
import purgeAccountBodies from './lua/ledger/purge-account-bodies.lua'
import purgeBodies from './lua/ledger/purge-bodies.lua'
import purgeEntries from './lua/ledger/purge-entries.lua'
import purgeMarks from './lua/ledger/purge-marks.lua'
import { type RedisClient, script } from './scripts.js'

// Retention of a Redis ledger: each script drops at most 500 a call and says how many it looked
// at, so a purge is many short calls, never one that blocks the server.

const PURGE_MARKS = script(purgeMarks)
const PURGE_ENTRIES = script(purgeEntries)
const PURGE_BODIES = script(bodyDrop, purgeBodies)
const PURGE_ACCOUNT_BODIES = script(bodyDrop, purgeAccountBodies)

/** Drops what `what` says is over: marks, then entries, bodies, an account's bodies. */
export async function purgeLedger(
  client: RedisClient,
  keys: LedgerKeys,
  what: LedgerPurge,
): Promise<LedgerPurged> {
  let bodies = 0
  let entries = 0
  let marks = 0
  // Each pass drops at most 500 and says how many it looked at: done when fewer.
  const until = async (pass: (offset: number) => Promise<unknown>) => {
    let dropped = 0
    for (let offset = 0; ; offset += 500) {
      const [count, seen] = (await pass(offset)) as [number, number]
      dropped += Number(count)
      if (Number(seen) < 500) return dropped
    }
  }
  const horizon = what.marksBefore
  if (horizon !== undefined)
    marks += await until(() => PURGE_MARKS(client, [keys.marks], [keys.mark(''), horizon]))
  const entryPrefix = keys.entry('')
  const keptPrefix = keys.kept('')
  const bodiesIndex = keys.bodies
  const bound = what.entriesBefore
  if (bound !== undefined)
    entries += await until(() =>
      PURGE_ENTRIES(
        client,
        [keys.byTime, bodiesIndex],
        [entryPrefix, keys.account(''), keptPrefix, bound],
      ),
    )
  const expired = what.bodiesBefore
  if (expired !== undefined)
    bodies += await until(() =>
      PURGE_BODIES(client, [bodiesIndex], [entryPrefix, keptPrefix, expired]),
    )
  // The account's index stays (it lists the entries): walked by offset. The others shrink.
  const account = what.account
  if (account !== undefined)
    bodies += await until((offset) =>
      PURGE_ACCOUNT_BODIES(
        client,
        [keys.account(account), bodiesIndex],
        [entryPrefix, keptPrefix, offset],
      ),
    )
  return { bodies, entries, marks }
}
