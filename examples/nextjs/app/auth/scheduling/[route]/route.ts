// /auth/scheduling/login, /callback and /disconnect: core's OAuth routes as route handlers.
// Connecting an account stores its tokens and gives it its own webhook.
import { createOAuthRoutes } from '@scheduling-kit/core/oauth'
import { scheduling } from '@/lib/scheduling'

const oauth = createOAuthRoutes<Request>(scheduling)

export const GET = (request: Request) => oauth.fetch(request)
export const POST = (request: Request) => oauth.fetch(request)
