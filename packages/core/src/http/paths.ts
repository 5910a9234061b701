/** A path or address without the slashes it ends with (a loop: no regular expression to backtrack). */
export function withoutTrailingSlashes(path: string): string {
  let end = path.length
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--
  return path.slice(0, end)
}
