import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { TokenRecord, TokenStore } from '@scheduling-kit/express'

/**
 * The app's own token store: one JSON file, written atomically (temporary file, then rename),
 * one write at a time. Enough for one process; for several, use a store with leases.
 */
export class JsonFileTokenStore implements TokenStore {
  #queue: Promise<unknown> = Promise.resolve()

  constructor(readonly file: string) {}

  async #read(): Promise<Record<string, TokenRecord>> {
    try {
      return JSON.parse(await readFile(this.file, 'utf8')) as Record<string, TokenRecord>
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {}
      throw error
    }
  }

  /** Runs read-modify-write steps one after another. */
  #update(change: (rows: Record<string, TokenRecord>) => void): Promise<void> {
    const next = this.#queue.then(async () => {
      const rows = await this.#read()
      change(rows)
      await mkdir(dirname(this.file), { recursive: true })
      const temporary = `${this.file}.${process.pid}.tmp`
      await writeFile(temporary, JSON.stringify(rows, null, 2), { mode: 0o600 })
      await rename(temporary, this.file)
    })
    this.#queue = next.catch(() => {})
    return next
  }

  async get(key: string): Promise<TokenRecord | undefined> {
    await this.#queue
    return (await this.#read())[key]
  }

  set(key: string, record: TokenRecord): Promise<void> {
    return this.#update((rows) => {
      rows[key] = record
    })
  }

  delete(key: string): Promise<void> {
    return this.#update((rows) => {
      delete rows[key]
    })
  }
}
