import { withCommands } from '../../vitest.shared.js'

export default withCommands({ pgbouncer: ['PGBOUNCER', 'test/pgbouncer.test.ts'] })
