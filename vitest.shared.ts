import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { configDefaults, defineConfig, type ViteUserConfig } from 'vitest/config'

/** Settings every package's vitest config starts from. */
const shared: ViteUserConfig = defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Each package writes a JSON report; scripts/test.mjs adds them up into one closing line
    // (a run of its own names another file in VITEST_REPORT).
    reporters: [
      'default',
      ['json', { outputFile: process.env.VITEST_REPORT ?? 'test-output/vitest.json' }],
    ],
    // Time-outs catch a hang, not slowness: a test on a loaded 2-core machine may take many
    // times what it takes on a quiet one, and must still pass.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Node's servers refuse request heads over 16 KiB by default; the hardening cases send
    // a megabyte of header to show its parse is linear (a runtime without the limit gets it).
    execArgv: ['--max-http-header-size=4194304'],
  },
})
export default shared

/** Where a command is: the environment variable naming it, else PATH, else /usr/sbin. */
function found(command: string, variable: string): boolean {
  if (process.env[variable]) return true
  if (spawnSync('sh', ['-c', `command -v ${command}`]).status === 0) return true
  return existsSync(`/usr/sbin/${command}`)
}

/**
 * The shared settings, less the test files that start a server of their own from a command this
 * machine lacks (`{ command: [variable naming its path, ...files] }`): they are left out, saying
 * so loudly. Under CI nothing is left out: such a file fails, saying what is missing.
 */
export function withCommands(needs: Record<string, [variable: string, ...files: string[]]>) {
  const exclude = [...configDefaults.exclude]
  for (const [command, [variable, ...files]] of Object.entries(needs)) {
    if (process.env.CI === 'true' || found(command, variable)) continue
    console.warn(
      `\n!!! ${command} is not installed: left out ${files.join(', ')} (install it, or set ${variable}).\n`,
    )
    exclude.push(...files)
  }
  return defineConfig({ ...shared, test: { ...shared.test, exclude } })
}
