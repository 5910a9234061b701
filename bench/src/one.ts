import { instructionsPerRequest } from './instructions.js'
import { eventBody } from './verify.js'

const [fw, size, variants] = process.argv.slice(2)
const payload = eventBody(Number(size))
const plan =
  Number(size) > 4096
    ? { warm: 300, count: 20, windows: 5 }
    : { warm: 4000, count: 400, windows: 5 }
await Promise.all(
  variants!.split(',').map(async (v) => {
    const ir = await instructionsPerRequest(fw!, v as 'ours', payload, plan)
    console.log(fw, v, size, Math.round(ir))
  }),
)
