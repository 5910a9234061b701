/** A note on what the app's console prints next, set apart from the checks. */
export const explain = (...lines: string[]) => {
  console.log(`\n  # ${lines.join('\n  # ')}`)
}

/** A demo's checks: each printed as it is made, then a summary table and the exit code. */
export function createChecks() {
  const rows: Array<[string, string, string]> = []
  return {
    check(what: string, expected: unknown, got: unknown) {
      rows.push([what, String(expected), String(got)])
      console.log(`${String(expected) === String(got) ? 'ok  ' : 'FAIL'} ${what}: ${got}`)
    },
    /** Prints the table; sets the exit code to 0 when every check came out as expected. */
    finish() {
      const width = Math.max(...rows.map((r) => r[0].length))
      console.log(`\n${'check'.padEnd(width)}  ${'expected'.padEnd(12)}  got`)
      for (const [what, expected, got] of rows) {
        console.log(
          `${what.padEnd(width)}  ${expected.padEnd(12)}  ${got}${expected === got ? '' : '   <-- unexpected'}`,
        )
      }
      const ok = rows.every(([, e, g]) => e === g)
      console.log(
        ok
          ? '\nDemo finished: every check as expected.'
          : '\nDemo finished with unexpected results.',
      )
      process.exitCode = ok ? 0 : 1
    },
  }
}
