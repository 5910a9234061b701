import { withCommands } from '../../vitest.shared.js'

export default withCommands({
  'redis-server': ['REDIS_SERVER', 'test/cluster.test.ts', 'test/restart.test.ts'],
  'redis-cli': ['REDIS_CLI', 'test/cluster.test.ts'],
})
