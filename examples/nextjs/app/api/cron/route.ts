// GET /api/cron: the periodic work (tokens refreshed ahead of expiry, each account's webhook
// checked and repaired), for Vercel Cron (vercel.json) or any scheduler that can send a request.
// Each call runs what is due within its budget and takes up where the last call ended, on
// whichever instance; call it every 1 to 15 minutes. Vercel sends the project's CRON_SECRET as
// a bearer token: anything else is refused.
import { timingSafeEqual } from 'node:crypto'
import { scheduling } from '@/lib/scheduling'

/** Whether the request carries the cron secret, compared in constant time. */
function fromCron(request: Request): boolean {
  const secret = process.env.CRON_SECRET
  if (secret === undefined || secret === '') return false
  const given = Buffer.from(request.headers.get('authorization') ?? '')
  const wanted = Buffer.from(`Bearer ${secret}`)
  return given.length === wanted.length && timingSafeEqual(given, wanted)
}

export const dynamic = 'force-dynamic'
// The platform's limit for the function; the budget below leaves room to answer.
export const maxDuration = 60

export async function GET(request: Request) {
  if (!fromCron(request)) return new Response('Unauthorized', { status: 401 })
  const report = await scheduling.runDue({ budgetMs: 10_000 })
  return Response.json({
    ms: report.ms,
    behindMs: report.behindMs,
    tasks: Object.fromEntries(
      Object.entries(report.tasks).map(([name, task]) => [
        name,
        { steps: task.steps, behindMs: task.behindMs },
      ]),
    ),
  })
}
