// pnpm migrate: the toolkit's tables and the app's, in DATABASE_SCHEMA (default public).
import { migrate } from '@scheduling-kit/postgres'
import { migrateBookings } from '../lib/bookings'
import { database, schema } from '../lib/scheduling'

await migrate(database(), { schema: schema() })
await migrateBookings()
await database().end()
console.log(`migrated: schema ${schema()}`)
