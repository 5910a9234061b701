// An OTLP/HTTP trace collector in the test's process: the demo's processes export to it.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface CollectedSpan {
  /** `service.instance.id` of the process that sent it: app-1..3, or worker. */
  instance: string
  name: string
  kind: number
  traceId: string
  spanId: string
  parentSpanId: string
  attributes: Record<string, unknown>
  links: Array<{ traceId: string; spanId: string }>
}

interface OtlpValue {
  stringValue?: string
  intValue?: string | number
  boolValue?: boolean
  doubleValue?: number
}
interface OtlpAttribute {
  key: string
  value: OtlpValue
}

/** OTLP/JSON ids are hex; a base64 one (protobuf's JSON mapping) is turned into hex. */
const hex = (id: string | undefined) =>
  id === undefined || id === ''
    ? ''
    : /^[0-9a-f]+$/.test(id)
      ? id
      : Buffer.from(id, 'base64').toString('hex')

const otlpValue = (value: OtlpValue) =>
  value.stringValue ??
  (value.intValue === undefined ? undefined : Number(value.intValue)) ??
  value.boolValue ??
  value.doubleValue

const attributesOf = (list: OtlpAttribute[] | undefined) =>
  Object.fromEntries((list ?? []).map((a) => [a.key, otlpValue(a.value)]))

export async function startCollector(): Promise<{
  url: string
  spans: CollectedSpan[]
  close(): Promise<void>
}> {
  const spans: CollectedSpan[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.method === 'POST') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        for (const rs of body.resourceSpans ?? []) {
          const instance = String(attributesOf(rs.resource?.attributes)['service.instance.id'])
          for (const ss of rs.scopeSpans ?? []) {
            for (const span of ss.spans ?? []) {
              spans.push({
                instance,
                name: span.name,
                kind: span.kind,
                traceId: hex(span.traceId),
                spanId: hex(span.spanId),
                parentSpanId: hex(span.parentSpanId),
                attributes: attributesOf(span.attributes),
                links: (span.links ?? []).map((l: { traceId: string; spanId: string }) => ({
                  traceId: hex(l.traceId),
                  spanId: hex(l.spanId),
                })),
              })
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
