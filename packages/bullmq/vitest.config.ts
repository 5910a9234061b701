import { withCommands } from '../../vitest.shared.js'

export default withCommands({
  'redis-server': ['REDIS_SERVER', 'test/outage.test.ts', 'test/queue.test.ts'],
})
