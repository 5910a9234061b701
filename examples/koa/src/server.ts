import { createApp } from './app.js'

function env(name: string): string {
  const value = process.env[name]
  if (value) return value
  console.error(`Set ${name} (see .env.example).`)
  process.exit(1)
}
const port = Number(process.env.PORT ?? 3000)
const { app } = createApp({
  publicUrl: process.env.PUBLIC_URL ?? `http://localhost:${port}`,
  webhookSecret: env('SCHEDULING_SECRET'),
  clientId: env('SCHEDULING_CLIENT_ID'),
  clientSecret: env('SCHEDULING_CLIENT_SECRET'),
  authUrl: env('SCHEDULING_AUTH_URL'),
  apiUrl: env('SCHEDULING_API_URL'),
  cookieSecret: env('COOKIE_SECRET'),
  tokenDir: process.env.TOKEN_DIR ?? './tokens',
})
app.listen(port, () => console.log(`Listening on port ${port}`))
