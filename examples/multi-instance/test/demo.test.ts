import { spawnSync } from 'node:child_process'
import { expect, it } from 'vitest'

it('pnpm demo:multi: three instances and a worker on one Redis; every check of its table as expected', () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/demo.ts'], {
    cwd: new URL('..', import.meta.url),
    encoding: 'utf8',
    timeout: 120_000,
  })
  expect(run.stderr).not.toMatch(/FAIL|Error/)
  expect(run.stdout).toMatch(/token refreshes for each of 3 expiries\s+1 1 1\s+1 1 1\n/)
  expect(run.stdout).toMatch(/events handled twice\s+0\s+0\n/)
  expect(run.stdout).toMatch(/events lost\s+0\s+0\n/)
  expect(run.stdout).toContain('Demo finished: every check as expected.')
  expect(run.status).toBe(0)
}, 150_000)
