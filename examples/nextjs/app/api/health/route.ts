// GET /api/health: readiness (the stores answer, the periodic work is not behind).
import { scheduling } from '@/lib/scheduling'

export const dynamic = 'force-dynamic'

export async function GET() {
  const report = await scheduling.health()
  return Response.json(report, { status: report.ok ? 200 : 503 })
}
