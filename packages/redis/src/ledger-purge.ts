import type { LedgerPurge, LedgerPurged } from '@scheduling-kit/core'
import type { LedgerKeys, LedgerShard } from './ledger-keys.js'
import bodyDrop from './lua/ledger/body-drop.lua'
import purgeAccountBodies from './lua/ledger/purge-account-bodies.lua'
import purgeBodies from './lua/ledger/purge-bodies.lua'
import purgeEntries from './lua/ledger/purge-entries.lua'
import purgeMarks from './lua/ledger/purge-marks.lua'
import { type RedisClient, script } from './scripts.js'

// Retention of a Redis ledger: each script drops at most 500 a call and says how many it looked
// at, so a purge is many short calls, never one that blocks the server; shards four at a time.

const PURGE_MARKS = script(purgeMarks)
const PURGE_ENTRIES = script(purgeEntries)
const PURGE_BODIES = script(bodyDrop, purgeBodies)
const PURGE_ACCOUNT_BODIES = script(bodyDrop, purgeAccountBodies)

/**
 * Drops what `what` says is over, in each shard: marks, then entries, bodies; an account's
 * bodies in its shard.
 */
export async function purgeLedger(
  client: RedisClient,
  keys: LedgerKeys,
  what: LedgerPurge,
): Promise<LedgerPurged> {
  const purged = { bodies: 0, entries: 0, marks: 0 }
  // A few shards at a time: each pass is many short calls, one after another.
  const shards = [...keys.shards]
  const worker = async () => {
    for (let shard = shards.shift(); shard !== undefined; shard = shards.shift()) {
      const counts = await purgeShard(client, shard, what)
      purged.bodies += counts.bodies
      purged.entries += counts.entries
      purged.marks += counts.marks ?? 0
    }
  }
  await Promise.all(Array.from({ length: Math.min(4, shards.length) }, worker))
  const account = what.account
  if (account !== undefined) {
    const shard = keys.ofAccount(account)
    purged.bodies += await until((offset) =>
      PURGE_ACCOUNT_BODIES(
        client,
        [shard.account(account), shard.bodies],
        [shard.entry(''), shard.kept(''), offset],
      ),
    )
  }
  return purged
}

/** Each pass drops at most 500 and says how many it looked at: done when fewer. */
async function until(pass: (offset: number) => Promise<unknown>): Promise<number> {
  let dropped = 0
  for (let offset = 0; ; offset += 500) {
    const [count, seen] = (await pass(offset)) as [number, number]
    dropped += Number(count)
    if (Number(seen) < 500) return dropped
  }
}

/** Drops the marks, entries and bodies of one shard that `what` says are over. */
async function purgeShard(
  client: RedisClient,
  shard: LedgerShard,
  what: LedgerPurge,
): Promise<LedgerPurged> {
  const purged = { bodies: 0, entries: 0, marks: 0 }
  const horizon = what.marksBefore
  if (horizon !== undefined)
    purged.marks = await until(() => PURGE_MARKS(client, [shard.marks], [shard.mark(''), horizon]))
  const bound = what.entriesBefore
  if (bound !== undefined)
    purged.entries = await until(() =>
      PURGE_ENTRIES(
        client,
        [shard.byTime, shard.bodies],
        [shard.entry(''), shard.account(''), shard.kept(''), bound],
      ),
    )
  const expired = what.bodiesBefore
  if (expired !== undefined)
    purged.bodies = await until(() =>
      PURGE_BODIES(client, [shard.bodies], [shard.entry(''), shard.kept(''), expired]),
    )
  return purged
}
