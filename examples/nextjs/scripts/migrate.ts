// pnpm migrate: the toolkit's tables and the app's, in DATABASE_SCHEMA (default public).
import { migrate } from '@scheduling-kit/postgres'
import { migrateBookings } from '../lib/bookings'
import { database, schema } from '../lib/scheduling'

const pool = await database()
await migrate(pool, { schema: schema() })
await migrateBookings()
await pool.end()
console.log(`migrated: schema ${schema()}`)
