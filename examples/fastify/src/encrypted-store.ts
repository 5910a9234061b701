import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { TokenRecord, TokenStore } from '@scheduling-kit/fastify'

/**
 * The app's own store: tokens encrypted at rest with AES-256-GCM (a fresh nonce per write, the
 * key's name bound as associated data), one file per key. A stolen disk leaks no token.
 */
export class EncryptedFileTokenStore implements TokenStore {
  readonly #key: Buffer

  constructor(
    readonly directory: string,
    key: Buffer,
  ) {
    if (key.length !== 32) throw new Error('EncryptedFileTokenStore: the key must be 32 bytes.')
    this.#key = key
  }

  // The key's UTF-16 code units, in the file's name and the associated data: UTF-8 would turn
  // every lone surrogate into U+FFFD, and two keys into one file.
  #path(key: string): string {
    return join(this.directory, `${createHash('sha256').update(key, 'utf16le').digest('hex')}.bin`)
  }

  async get(key: string): Promise<TokenRecord | undefined> {
    let sealed: Buffer
    try {
      sealed = await readFile(this.#path(key))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
    const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.subarray(0, 12))
    decipher.setAAD(Buffer.from(key, 'utf16le'))
    decipher.setAuthTag(sealed.subarray(12, 28))
    return JSON.parse(
      Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8'),
    )
  }

  async set(key: string, record: TokenRecord): Promise<void> {
    const nonce = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce)
    cipher.setAAD(Buffer.from(key, 'utf16le'))
    const body = Buffer.concat([cipher.update(JSON.stringify(record), 'utf8'), cipher.final()])
    await mkdir(this.directory, { recursive: true, mode: 0o700 })
    const path = this.#path(key)
    const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`
    await writeFile(temporary, Buffer.concat([nonce, cipher.getAuthTag(), body]), { mode: 0o600 })
    await rename(temporary, path)
  }

  async delete(key: string): Promise<void> {
    await rm(this.#path(key), { force: true })
  }
}
