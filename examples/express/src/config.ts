/** The app's settings, from environment variables (see .env.example). */
export interface Config {
  publicUrl: string
  port: number
  webhookSecret: string
  clientId: string
  clientSecret: string
  authUrl: string
  apiUrl: string
  cookieSecret: string
  tokenFile: string
  /** The cookie value (`example_admin=...`) that opens the delivery page at /admin/deliveries. */
  adminToken: string
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): Config {
  const need = (name: string): string => {
    const value = env[name]
    if (!value) throw new Error(`Set ${name} (see .env.example).`)
    return value
  }
  const port = Number(env.PORT ?? 3000)
  return {
    port,
    publicUrl: env.PUBLIC_URL ?? `http://localhost:${port}`,
    webhookSecret: need('SCHEDULING_SECRET'),
    clientId: need('SCHEDULING_CLIENT_ID'),
    clientSecret: need('SCHEDULING_CLIENT_SECRET'),
    authUrl: need('SCHEDULING_AUTH_URL'),
    apiUrl: need('SCHEDULING_API_URL'),
    cookieSecret: need('COOKIE_SECRET'),
    tokenFile: env.TOKEN_FILE ?? './tokens.json',
    adminToken: need('ADMIN_TOKEN'),
  }
}
