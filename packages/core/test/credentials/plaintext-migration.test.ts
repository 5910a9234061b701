// The migration mode (plaintext: 'accept') tells the developer once per process, a second
// after the first plaintext read, how many records it read in plaintext and how to finish.
// Its own file: "once per process" is module state, and other files read plaintext too.
import { describe, expect, it } from 'vitest'
import { createCredentialCipher } from '../../src/credentials/cipher.js'
import { generateCredentialKey } from '../../src/credentials/keys.js'
import { encryptTokenStore } from '../../src/tokens/encrypt.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'

const tokens = (n: number) => ({
  accessToken: `at_${n}`,
  refreshToken: `rt_${n}`,
  tokenType: 'bearer',
  expiresAt: Date.now() + 3_600_000,
})

describe("plaintext: 'accept'", () => {
  it('logs once per process how many plaintext records it read and how to finish', async () => {
    const lines: string[] = []
    const logger = { debug() {}, info() {}, error() {}, warn: (l: string) => void lines.push(l) }
    const k1 = generateCredentialKey()
    const migrating = createCredentialCipher({
      keys: { k1 },
      current: 'k1',
      plaintext: 'accept',
      logger,
    })
    const other = createCredentialCipher({
      keys: { k1 },
      current: 'k1',
      plaintext: 'accept',
      logger,
    })
    const inner = new MemoryTokenStore()
    for (let i = 0; i < 5; i++) await inner.set(`acct_${i}`, tokens(i))
    for (let i = 0; i < 3; i++) await encryptTokenStore(inner, migrating).get(`acct_${i}`)
    await encryptTokenStore(inner, other).get('acct_4')
    expect(lines).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 1_300))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/3 credential record\(s\) were read in plaintext/)
    expect(lines[0]).toMatch(/run reencrypt\(\) on every token and subscription store/)
    expect(lines[0]).toMatch(/remove the plaintext option/)
    expect(lines[0]).not.toMatch(/at_|rt_/)
    await encryptTokenStore(inner, migrating).get('acct_3')
    await new Promise((resolve) => setTimeout(resolve, 1_300))
    expect(lines).toHaveLength(1)
    expect(migrating.plaintextReads).toBe(4)
  })
})
