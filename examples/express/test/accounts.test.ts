import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

const run = promisify(execFile)

it('the connected-accounts demo passes every check (pnpm demo runs it after the main one)', async () => {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', new URL('../src/accounts-demo.ts', import.meta.url).pathname],
    { cwd: new URL('..', import.meta.url).pathname },
  )
  expect(stdout).toContain('Demo finished: every check as expected.')
  expect(stdout).not.toContain('FAIL')
})
