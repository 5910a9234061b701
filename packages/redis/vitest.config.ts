import type { ViteUserConfig } from 'vitest/config'
import { withCommands } from '../../vitest.shared.js'

const config = withCommands({
  'redis-server': ['REDIS_SERVER', 'test/cluster.test.ts', 'test/restart.test.ts'],
  'redis-cli': ['REDIS_CLI', 'test/cluster.test.ts'],
})

const withLua: ViteUserConfig = {
  ...config,
  // The Lua scripts of src/lua/ are imported as their text, as tsup's `text` loader builds them.
  plugins: [
    {
      name: 'lua',
      transform(code: string, id: string) {
        if (!id.endsWith('.lua')) return null
        return { code: `export default ${JSON.stringify(code)}`, map: null }
      },
    },
  ],
}
export default withLua
