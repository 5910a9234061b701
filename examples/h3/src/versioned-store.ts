import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { TokenRecord, TokenStore } from '@scheduling-kit/h3'

type Row = TokenRecord & { version: number }

/**
 * The app's own store: a JSON file whose records carry a version, with `compareAndSet`, so the
 * token manager never writes over newer tokens (a reconnect during a refresh, say). One process
 * at a time: its writes are serialized in memory.
 */
export class VersionedJsonTokenStore implements TokenStore {
  #queue: Promise<unknown> = Promise.resolve()

  constructor(readonly file: string) {}

  async #rows(): Promise<Record<string, Row>> {
    try {
      return JSON.parse(await readFile(this.file, 'utf8')) as Record<string, Row>
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {}
      throw error
    }
  }

  /** Read, change, write: one at a time. `change` returns whether to write. */
  #transaction<T>(change: (rows: Record<string, Row>) => T): Promise<T> {
    const next = this.#queue.then(async () => {
      const rows = await this.#rows()
      const result = change(rows)
      if (result !== false) {
        await mkdir(dirname(this.file), { recursive: true })
        const temporary = `${this.file}.${process.pid}.tmp`
        await writeFile(temporary, JSON.stringify(rows), { mode: 0o600 })
        await rename(temporary, this.file)
      }
      return result
    })
    this.#queue = next.catch(() => {})
    return next
  }

  async get(key: string): Promise<TokenRecord | undefined> {
    await this.#queue
    return (await this.#rows())[key]
  }

  set(key: string, record: TokenRecord): Promise<void> {
    return this.#transaction((rows) => {
      rows[key] = { ...record, version: (rows[key]?.version ?? 0) + 1 }
    })
  }

  delete(key: string): Promise<void> {
    return this.#transaction((rows) => {
      delete rows[key]
    })
  }

  compareAndSet(
    key: string,
    record: TokenRecord,
    expectedVersion: number | undefined,
  ): Promise<boolean> {
    return this.#transaction((rows) => {
      if (rows[key]?.version !== expectedVersion) return false
      rows[key] = { ...record, version: (expectedVersion ?? 0) + 1 }
      return true
    })
  }
}
