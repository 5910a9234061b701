import { ConfigError } from '@scheduling-kit/core'
// Redis Cluster's slots: a key's slot is the CRC16 (XMODEM) of its hash tag (the text between
// its first `{` and the next `}`, when not empty; else the whole key) modulo 16 384. Pure, so a
// store can choose tags that land where it wants them.

/** How many slots a Redis Cluster has. */
export const SLOTS = 16_384

const TABLE = (() => {
  const table = new Uint16Array(256)
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1
    table[byte] = crc & 0xffff
  }
  return table
})()

/** CRC16 (XMODEM, polynomial 0x1021, initial 0) of `bytes`: Redis Cluster's key hash. */
export function crc16(bytes: Uint8Array): number {
  let crc = 0
  for (const byte of bytes) crc = ((crc << 8) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!) & 0xffff
  return crc
}

const encoder = new TextEncoder()

/** The slot of `key`, as a Redis Cluster computes it (hash tags included). */
export function slotOf(key: string): number {
  const bytes = encoder.encode(key)
  const open = bytes.indexOf(0x7b)
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1)
    if (close > open + 1) return crc16(bytes.subarray(open + 1, close)) % SLOTS
  }
  return crc16(bytes) % SLOTS
}

/**
 * For each of `count` shards, the least `n` whose key `keyOf(n)` falls in the shard's own
 * `1/count` of the slots, in order: a cluster's masters own contiguous ranges of slots, so the
 * shards spread over them as evenly as the ranges allow (with `count` 64 and 3 masters, 21 or 22
 * shards each). `keyOf(n)` must put `n` inside the key's hash tag.
 */
export function spreadOverSlots(keyOf: (n: number) => string, count: number): number[] {
  const found: number[] = []
  for (let shard = 0; shard < count; shard++) {
    const low = Math.ceil((shard * SLOTS) / count)
    const high = Math.ceil(((shard + 1) * SLOTS) / count)
    // A range of 1/count of the slots is hit once in `count` tries on average; 64 times that
    // is not reached unless `n` is outside the hash tag.
    const most = 64 * count
    let n = 0
    for (; n < most; n++) {
      const slot = slotOf(keyOf(n))
      if (slot >= low && slot < high) break
    }
    if (n === most)
      throw new ConfigError(
        `spreadOverSlots: no key found in slots ${low} to ${high - 1} for shard ${shard} of ${count}: each key's number must be inside its hash tag, and the shards at most a few hundred.`,
      )
    found.push(n)
  }
  return found
}

/** FNV-1a (32 bits) of a string's UTF-16 units: which shard an account's keys go to. */
export function shardOf(text: string, shards: number): number {
  if (shards === 1) return 0
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return (hash >>> 0) % shards
}
