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
 * FNV-1a over the value in canonical form: object keys sorted, arrays in order, each string
 * told with its length (no string can pose as the fields around it), each other value by its
 * type and text ("1" and 1 differ). The same resource gives the same digest whatever order its
 * keys were sent in. 32 bits: catch-up compares one Event's digest with the one applied before
 * it, so a change goes unseen with odds of one in four billion (and the next change shows it).
 */
class Fnv {
  h = 0x811c9dc5

  text(s: string): void {
    let h = this.h
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
    this.h = h
  }

  /** A string with its length before it: `"` length `:` text. */
  string(s: string): void {
    this.text(`"${s.length}:`)
    this.text(s)
  }

  value(v: unknown, depth: number): void {
    if (typeof v === 'string') this.string(v)
    else if (v === null || typeof v !== 'object') this.text(`${typeof v}:${String(v)};`)
    else if (depth >= MAX_DEPTH) this.text(Array.isArray(v) ? '[…]' : '{…}')
    else if (Array.isArray(v)) {
      this.text(`[${v.length}`)
      for (const item of v) this.value(item, depth + 1)
      this.text(']')
    } else {
      const record = v as Record<string, unknown>
      this.text('{')
      for (const key of Object.keys(record).sort()) {
        if (record[key] === undefined) continue
        this.string(key)
        this.value(record[key], depth + 1)
      }
      this.text('}')
    }
  }

  hex(): string {
    return (this.h >>> 0).toString(16).padStart(8, '0')
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
