import { createHash } from 'node:crypto'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { TokenRecord, TokenStore } from '@scheduling-kit/koa'

/** The app's own store: one JSON file per key in a directory, each written atomically. */
export class DirectoryTokenStore implements TokenStore {
  constructor(readonly directory: string) {}

  // Keys become file names: hashed, so no key can name a path outside the directory or be too
  // long for one, over the key's UTF-16 code units (UTF-8 would turn every lone surrogate into
  // U+FFFD, and two keys into one file).
  #path(key: string): string {
    return join(this.directory, `${createHash('sha256').update(key, 'utf16le').digest('hex')}.json`)
  }

  async get(key: string): Promise<TokenRecord | undefined> {
    try {
      return JSON.parse(await readFile(this.#path(key), 'utf8')) as TokenRecord
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }

  async set(key: string, record: TokenRecord): Promise<void> {
    await mkdir(this.directory, { recursive: true, mode: 0o700 })
    const path = this.#path(key)
    const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
    await writeFile(temporary, JSON.stringify(record), { mode: 0o600 })
    await rename(temporary, path)
  }

  async delete(key: string): Promise<void> {
    await rm(this.#path(key), { force: true })
  }
}
