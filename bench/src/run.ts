import { targets } from './harness.js'
import { tokenBench } from './tokens.js'
import { verifyBench } from './verify.js'

const all = [...(await verifyBench()), ...(await tokenBench())]
const ok = targets(all)
console.log(ok ? '\nAll targets met.' : '\nSome targets were missed.')
process.exitCode = ok ? 0 : 1
