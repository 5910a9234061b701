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
  const lower = name.toLowerCase()
  let value = record[lower]
  if (value === undefined) {
    // Another spelling of the name (Node's own records are lower-case already).
    for (const key of Object.keys(record)) {
      if (key.length === lower.length && key.toLowerCase() === lower) {
        value = record[key]
        break
      }
    }
  }
  if (value === undefined) return undefined
  if (typeof value === 'number') return String(value)
  return typeof value === 'string' ? value : value[0]
}
