// Keys a store must keep apart however alike: two that differ only in a lone surrogate (both
// become U+FFFD when written as UTF-8), the characters of key syntaxes (Redis's `:` and the
// braces of a Cluster hash tag) and length (a key cut or hashed past a bound).

/** Keys made from `stem` that a store must keep apart: lone surrogates, `:`, `{`, `}`, length. */
export function alikeKeys(stem: string, long = 600): string[] {
  return [
    `${stem}\ud800`,
    `${stem}\udc00`,
    stem,
    `${stem}:`,
    `${stem}{`,
    `${stem}}`,
    `{${stem}}`,
    stem + 'x'.repeat(long),
    stem + 'x'.repeat(long + 1),
  ]
}
