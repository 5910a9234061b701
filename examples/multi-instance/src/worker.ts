// The worker process: runs the handlers of queued deliveries, with retries, recording each in
// the ledger the app instances record in.
import './telemetry.js'
import { fromEnv } from './config.js'
import { configure } from './scheduling.js'

const config = fromEnv()
const { scheduling, backend } = await configure(config, 20)

// The handlers live here only: the app instances verify and queue. The app's work for the
// event; here, a record the demo reads (connected accounts' deliveries name their account).
scheduling.webhooks.onAny((event, { account }) => backend.record(event.id, account))
await backend.work(scheduling)
process.send?.({ type: 'ready' })
