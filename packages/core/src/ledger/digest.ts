// What an Event looks like, in a few bytes: the digest catch-up compares the API's listing with,
// and the two fields it names a difference by. Synchronous and cheap: computed for every
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
 * The value in canonical form: object keys sorted, arrays in order, each string told with its
 * length (no string can pose as the fields around it), each other value by its type and text
 * ("1" and 1 differ). The same resource gives the same text whatever order its keys came in.
 */
function canonical(v: unknown, depth: number): string {
  if (typeof v === 'string') return `"${v.length}:${v}`
  if (v === null || typeof v !== 'object') return `${typeof v}:${String(v)};`
  if (depth >= MAX_DEPTH) return Array.isArray(v) ? '[…]' : '{…}'
  if (Array.isArray(v)) {
    let text = `[${v.length}`
    for (const item of v) text += canonical(item, depth + 1)
    return `${text}]`
  }
  const record = v as Record<string, unknown>
  let text = '{'
  for (const key of Object.keys(record).sort()) {
    if (record[key] === undefined) continue
    text += `"${key.length}:${key}${canonical(record[key], depth + 1)}`
  }
  return `${text}}`
}

/** Where the canonical text is encoded (UTF-8): one buffer for every digest up to 64 KiB. */
const KEPT = new Uint8Array(65_536)
const KEPT_WORDS = new Uint32Array(KEPT.buffer)
/** Whether this machine reads a 32-bit word's first byte as its lowest (nearly all do). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1
const encoder = new TextEncoder()

/**
 * FNV-1a over the canonical text's UTF-8 bytes, a 32-bit word at a time (native encoding,
 * then a quarter of the steps a character at a time took), then mixed (murmur3's finaliser).
 * Each step is a bijection of the hash, so text whose bytes differ in one word always gives
 * another digest (a lone surrogate encodes as U+FFFD, as it would in any JSON sent on).
 * 32 bits: catch-up compares one Event's digest with the one applied before it, so a change
 * goes unseen with odds of about one in four billion (and the next change shows it).
 */
function fnv(text: string): number {
  // A larger resource (rare: a body is at most 1 MiB) gets a buffer of its own, not kept.
  const need = text.length * 3 + 4
  const bytes = need <= KEPT.length ? KEPT : new Uint8Array(need + (4 - (need % 4)))
  const words = bytes === KEPT ? KEPT_WORDS : new Uint32Array(bytes.buffer)
  const length = encoder.encodeInto(text, bytes).written
  // Zeros after the text fill its last word; the length, hashed last, tells them from text.
  bytes[length] = 0
  bytes[length + 1] = 0
  bytes[length + 2] = 0
  let h = 0x811c9dc5
  const count = (length + 3) >>> 2
  if (LITTLE_ENDIAN) for (let i = 0; i < count; i++) h = Math.imul(h ^ words[i]!, 0x01000193)
  else
    for (let i = 0; i < count; i++) {
      const at = i << 2
      const word =
        bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)
      h = Math.imul(h ^ word, 0x01000193)
    }
  h = Math.imul(h ^ length, 0x01000193)
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** The digest of a resource (its top-level fields in `ignore` left out). */
export function digestOf(resource: Record<string, unknown>, ignore?: ReadonlySet<string>): string {
  let kept = resource
  if (ignore !== undefined && ignore.size > 0) {
    kept = {}
    for (const key of Object.keys(resource)) if (!ignore.has(key)) kept[key] = resource[key]
  }
  return fnv(canonical(kept, 0)).toString(16).padStart(8, '0')
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
