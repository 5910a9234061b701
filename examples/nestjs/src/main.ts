// A NestJS app compiled to CommonJS: `import` here becomes `require()`, and Node 22.12+ requires
// the ESM-only @scheduling-kit/express. Nest's body parser runs first, with `rawBody: true`
// keeping the bytes the signature covers on `req.rawBody`; the webhook middleware verifies them.
import 'reflect-metadata'
import { NestFactory } from '@nestjs/core'
import { MemoryTokenStore, schedulingOAuth, schedulingWebhooks } from '@scheduling-kit/express'
import { AppModule } from './app.module'
import { Deliveries } from './deliveries'

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, { rawBody: true, logger: ['error'] })
  const deliveries = app.get(Deliveries)
  app.use(
    schedulingWebhooks(process.env.SCHEDULING_SECRET!).onAny((event) =>
      deliveries.add(event.type, event.id),
    ),
  )
  app.use(
    '/auth/scheduling',
    schedulingOAuth({
      clientId: process.env.SCHEDULING_CLIENT_ID!,
      clientSecret: process.env.SCHEDULING_CLIENT_SECRET!,
      redirectUri: `${process.env.APP_URL ?? 'http://127.0.0.1'}/auth/scheduling/callback`,
      authUrl: process.env.SCHEDULING_AUTH_URL!,
      tokenStore: new MemoryTokenStore(),
      cookieSecret: process.env.COOKIE_SECRET,
    }),
  )
  await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1')
  const address = app.getHttpServer().address() as { port: number }
  console.log(JSON.stringify({ port: address.port }))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
