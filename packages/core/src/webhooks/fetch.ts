import { serverText, WebhookError } from '../errors/errors.js'
import { json, type WebhookResponse } from './answer.js'
import { FETCH_FIX } from './body/refusals.js'
import type { WebhookRequest } from './request.js'

// A webhook path's Fetch face, the preset handler's (`webhooks.fetch`) and a composed path's
// (`composeWebhooks`) alike.

/**
 * The handler's Fetch face (`webhooks.fetch`): a Fetch `Request` handed to `handle`, its answer
 * as a `Response`; a path the handler does not serve answers 404.
 */
export async function answerFetch(
  handle: (request: WebhookRequest) => Promise<WebhookResponse | undefined>,
  request: Request,
): Promise<Response> {
  const url = new URL(request.url)
  const answer =
    (await handle({
      method: request.method,
      path: url.pathname,
      headers: request.headers,
      body: request.body,
      bodyUsed: request.bodyUsed,
      fix: FETCH_FIX,
    })) ??
    json(
      404,
      new WebhookError(
        'not_found',
        `Nothing is served at ${serverText(url.pathname, 200)}.`,
      ).toJSON(),
    )
  return new Response(answer.body, { status: answer.status, headers: answer.headers })
}
