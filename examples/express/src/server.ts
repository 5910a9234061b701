import { createApp } from './app.js'
import { configFromEnv } from './config.js'

const config = configFromEnv()
createApp(config).app.listen(config.port, () => {
  console.log(
    `Listening on ${config.publicUrl} (webhooks: POST /webhooks/scheduling, OAuth: /auth/scheduling/login)`,
  )
})
