import type { OAuthResponse } from '@scheduling-kit/core/oauth'
import type { WebhookResponse } from '@scheduling-kit/core/webhooks'
import type { Context, Next } from 'koa'

/** Writes core's answer, or passes on when there is none. */
export async function reply(
  ctx: Context,
  next: Next,
  answer: WebhookResponse | OAuthResponse | undefined,
): Promise<void> {
  if (answer === undefined) return next()
  ctx.status = answer.status
  ctx.set(answer.headers)
  ctx.body = answer.body
}
