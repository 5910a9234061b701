// What an Event looks like, in a few bytes: the digest catch-up compares the API's listing with,
// and the two fields it names a difference by. Pure, synchronous and cheap: computed for every
// delivery that names an Event, so no promise and no crypto (a change detector, not a seal).

/** An Event's digest and its times, as a delivery's entry and its resource's mark keep them. */
export interface ResourceShape {
  /** A digest of the whole resource: every field, unknown ones included, in any key order. */
  digest: string
  /** `start_at` and `end_at` as sent, for telling a reschedule from another change. */
  when?: string
}

/** The most nesting the digest walks; deeper values count by their type alone. */
const MAX_DEPTH = 16

/**
 * Two 32-bit FNV-1a lanes (different offsets, the second fed each code unit rotated) over the
 * value in canonical form: object keys sorted, arrays in order, strings quoted. The same
 * resource gives the same digest whatever order its keys were sent in.
 */
class Fnv {
  a = 0x811c9dc5
  b = 0x01000193 ^ 0x5bd1e995

  text(s: string): void {
    let { a, b } = this
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i)
      a = Math.imul(a ^ c, 0x01000193)
      b = Math.imul(b ^ ((c << 7) | (c >>> 9)), 0x01000193)
    }
    this.a = a
    this.b = b
  }

  value(v: unknown, depth: number): void {
    if (v === null || typeof v !== 'object') {
      // Strings quoted and escaped as JSON writes them: "1" and 1 differ, and no string can
      // pose as the fields around it.
      this.text(typeof v === 'string' ? JSON.stringify(v) : String(v))
      return
    }
    if (depth >= MAX_DEPTH) {
      this.text(Array.isArray(v) ? '[…]' : '{…}')
      return
    }
    if (Array.isArray(v)) {
      this.text('[')
      for (const item of v) {
        this.value(item, depth + 1)
        this.text(',')
      }
      this.text(']')
      return
    }
    this.text('{')
    const record = v as Record<string, unknown>
    for (const key of Object.keys(record).sort()) {
      if (record[key] === undefined) continue
      this.text(`${JSON.stringify(key)}:`)
      this.value(record[key], depth + 1)
      this.text(',')
    }
    this.text('}')
  }

  hex(): string {
    return (
      (this.a >>> 0).toString(16).padStart(8, '0') + (this.b >>> 0).toString(16).padStart(8, '0')
    )
  }
}

/** The digest of a resource (its top-level fields in `ignore` left out). */
export function digestOf(resource: Record<string, unknown>, ignore?: ReadonlySet<string>): string {
  const h = new Fnv()
  if (ignore === undefined || ignore.size === 0) h.value(resource, 0)
  else {
    const kept: Record<string, unknown> = {}
    for (const key of Object.keys(resource)) if (!ignore.has(key)) kept[key] = resource[key]
    h.value(kept, 0)
  }
  return h.hex()
}

/** An Event's shape: its digest and its times. */
export function shapeOf(
  resource: Record<string, unknown>,
  ignore?: ReadonlySet<string>,
): ResourceShape {
  const shape: ResourceShape = { digest: digestOf(resource, ignore) }
  const { start_at: start, end_at: end } = resource
  if (typeof start === 'string' || typeof end === 'string')
    shape.when = `${typeof start === 'string' ? start.slice(0, 64) : ''}/${typeof end === 'string' ? end.slice(0, 64) : ''}`
  return shape
}
