import { OAuthFlowError } from '../errors/connection.js'
import { newConnection } from '../tokens/connection.js'
import type { TokenRecord } from '../tokens/record.js'
import type { TokenStore } from '../tokens/store.js'

/** How many times a connection's write is tried again when another write got in between. */
export const CONNECTION_WRITE_ATTEMPTS = 8

/**
 * Stores a new connection of `key` over `previous` (what the callback read), and resolves to
 * the record stored. Its generation is later than the record it replaces: with a store that
 * has `compareAndSet`, the write happens only over the version it was computed from, and is
 * computed again from what is stored when another write (a second connect of the same key, a
 * refresh) got in between, so generations are stored in order whatever the interleaving.
 * A store without it is written unconditionally (no order can be relied on there).
 */
export async function storeConnection(
  store: TokenStore,
  key: string,
  previous: TokenRecord | undefined,
  make: (connection: string) => TokenRecord,
): Promise<TokenRecord & { connection: string }> {
  if (typeof store.compareAndSet !== 'function') {
    const connection = newConnection(previous?.connection)
    const record = { ...make(connection), connection }
    await store.set(key, record)
    return record
  }
  let base = previous
  for (let attempt = 1; ; attempt++) {
    const connection = newConnection(base?.connection)
    const { version: _, ...made } = make(connection)
    const record = { ...made, connection }
    if (await store.compareAndSet(key, record, base?.version)) return record
    if (attempt >= CONNECTION_WRITE_ATTEMPTS) break
    base = await store.get(key)
  }
  throw new OAuthFlowError(
    'store_failed',
    `The tokens could not be saved: the token store's record changed under each of ${CONNECTION_WRITE_ATTEMPTS} writes (other connections or refreshes of the same key kept getting in between).`,
  )
}
