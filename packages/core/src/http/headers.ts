/** Request headers as frameworks give them: a Fetch `Headers`, or Node's lower-cased record. */
export type HeadersInput =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | number | undefined>>

/** Reads one header, case-insensitively; the first value when it was sent more than once. */
export function getHeader(headers: HeadersInput | undefined, name: string): string | undefined {
  if (headers === undefined || headers === null) return undefined
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined
  }
  const record = headers as Readonly<
    Record<string, string | readonly string[] | number | undefined>
  >
  // Node's records are lower-case already, as are the names core asks for: one load finds them.
  let value = record[name]
  if (value === undefined) value = otherSpelling(record, name)
  if (value === undefined) return undefined
  if (typeof value === 'number') return String(value)
  return typeof value === 'string' ? value : value[0]
}

/** The value under another spelling of `name` (a hand-made record, a name given in capitals). */
function otherSpelling(
  record: Readonly<Record<string, string | readonly string[] | number | undefined>>,
  name: string,
): string | readonly string[] | number | undefined {
  const lower = name.toLowerCase()
  if (lower !== name && record[lower] !== undefined) return record[lower]
  for (const key in record) {
    if (key.length === lower.length && key.toLowerCase() === lower) return record[key]
  }
  return undefined
}
