// What a server sends back can quote what it was sent: an `error_description` that echoes the
// refresh token, an API error body holding the bearer token. Before such text reaches a
// message, a log or a span, every credential the toolkit sent in that request is taken out.

/** What stands where a credential was. */
export const REDACTED = '[redacted]'

/** Credentials shorter than this are not looked for: too short to be one, too likely to match. */
const SHORTEST = 6

/** `text` with every occurrence of each credential in `sent` replaced by `[redacted]`. */
export function redactText(text: string, sent: readonly (string | undefined)[]): string {
  let clean = text
  // Again while a pass changed something: taking one credential out can join the text around it
  // into another (a bounded number of passes; a credential the marker itself holds is left).
  for (let pass = 0, changed = true; changed && pass < 4; pass++) {
    changed = false
    for (const secret of sent)
      if (
        secret !== undefined &&
        secret.length >= SHORTEST &&
        !REDACTED.includes(secret) &&
        clean.includes(secret)
      ) {
        clean = clean.split(secret).join(REDACTED)
        changed = true
      }
  }
  return clean
}

/**
 * `value` (a parsed body: text, arrays, objects, at most 16 deep) with every credential in
 * `sent` taken out of its strings and keys; the same value when none occurs.
 */
export function redactValue(
  value: unknown,
  sent: readonly (string | undefined)[],
  depth = 0,
): unknown {
  if (typeof value === 'string') return redactText(value, sent)
  if (typeof value !== 'object' || value === null || depth >= 16) return value
  if (Array.isArray(value)) return value.map((item) => redactValue(item, sent, depth + 1))
  const clean: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value))
    clean[redactText(key, sent)] = redactValue(item, sent, depth + 1)
  return clean
}
