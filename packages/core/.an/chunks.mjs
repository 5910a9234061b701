import { rollup } from 'rollup'
import configs from '../rollup.config.mjs'

const config = configs[1]
const bundle = await rollup(config)
const { output } = await bundle.generate(config.output[0])
for (const chunk of output) {
  if (chunk.type !== 'chunk' || !chunk.fileName.includes(process.argv[2] ?? 'webhooks.node-'))
    continue
  console.log(chunk.fileName, chunk.code.length)
  const rows = Object.entries(chunk.modules)
    .map(([id, m]) => [m.renderedLength, id.replace(/.*\/src\//, '')])
    .sort((a, b) => b[0] - a[0])
  for (const [n, id] of rows) if (n > 0) console.log(n, id)
}
