/** Marks a key written in its escaped form: U+FFFF, a noncharacter no real key starts with. */
export const ESCAPED_KEY_MARK = '\uffff'

/**
 * A key as a store writes it, lossless: the key itself when it is well-formed UTF-16 (no lone
 * surrogate, which UTF-8 drivers turn into U+FFFD, so two keys would become one), does not
 * start with the mark and is not refused by `escapeAlso`; otherwise the mark and the hex of its
 * UTF-16 code units. Distinct keys always give distinct results.
 *
 * @example
 * ```ts
 * encodeStoreKey('acct_1') // 'acct_1'
 * encodeStoreKey('a\ud800') // '\uffff0061d800'
 * ```
 */
export function encodeStoreKey(key: string, escapeAlso?: (key: string) => boolean): string {
  if (isWellFormed(key) && !key.startsWith(ESCAPED_KEY_MARK) && escapeAlso?.(key) !== true)
    return key
  let hex = ESCAPED_KEY_MARK
  for (let i = 0; i < key.length; i++) hex += key.charCodeAt(i).toString(16).padStart(4, '0')
  return hex
}

/** The key `encodeStoreKey` wrote: the inverse, for a store that reads keys back (a sweep). */
export function decodeStoreKey(stored: string): string {
  if (!stored.startsWith(ESCAPED_KEY_MARK)) return stored
  let key = ''
  for (let i = ESCAPED_KEY_MARK.length; i + 4 <= stored.length; i += 4) {
    key += String.fromCharCode(Number.parseInt(stored.slice(i, i + 4), 16))
  }
  return key
}

function isWellFormed(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit < 0xd800 || unit > 0xdfff) continue
    if (unit > 0xdbff) return false
    const next = text.charCodeAt(i + 1)
    if (!(next >= 0xdc00 && next <= 0xdfff)) return false
    i++
  }
  return true
}
