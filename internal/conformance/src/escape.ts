import fc from 'fast-check'

/**
 * Paths built to leave the site once a browser resolves them: dot segments (plain and
 * percent-encoded), backslashes, tabs and newlines, repeated slashes, encoded slashes, userinfo
 * and host look-alikes. Core's `safeReturnTo` property and the conformance suite's disconnect
 * property draw from this one generator.
 */
export function escapingPath(): fc.Arbitrary<string> {
  const segment = fc.constantFrom(
    '.',
    '..',
    '%2e',
    '%2E',
    '%2e%2e',
    '.%2e',
    '.%2E',
    '%2E.',
    '',
    'evil.test',
    'a',
    '\\',
    '\t',
    '\n',
    '%09',
    '%5c',
    '%5C',
    '%2f',
    '@evil.test',
    ':',
    'evil.test:443',
    '?',
    '#',
  )
  return fc
    .tuple(
      fc.constantFrom('/', '//', '/\\', '\\', '', '/./', '/../'),
      fc.array(segment, { maxLength: 8 }),
      fc.constantFrom('/', '\\', '//', '/./'),
      fc.constantFrom('', '?x=1', '#f', '?a=//evil.test'),
    )
    .map(([lead, parts, sep, tail]) => lead + parts.join(sep) + tail)
}
