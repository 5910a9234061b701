import { isThenable } from '../thenable.js'
import { observer } from '../webhooks/telemetry/switch.js'
import type { WebhookPart } from './path.js'

// Telemetry as a part: the delivery's span (`scheduling.webhook.delivery`) and metrics around
// the parts after it, and the handlers' and the enqueue's spans under it, when an OpenTelemetry
// SDK records (on the Web build, once the app called `useOpenTelemetry`). Put it first.

/** Observes the parts after it: one property read when nothing records. */
export function traced(): WebhookPart {
  return (delivery, next) => {
    const o = observer()
    const observe = (loaded: Awaited<typeof o>) => {
      const watch = loaded?.startDelivery(delivery.request.method, delivery.path)
      if (watch === undefined) return next()
      delivery.watch = watch
      return loaded!.observeDelivery(watch, delivery, next)
    }
    return isThenable(o) ? Promise.resolve(o).then(observe) : observe(o)
  }
}
