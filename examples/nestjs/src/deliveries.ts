import { Injectable } from '@nestjs/common'

/** What the app's webhook handlers were given: a Nest provider the middleware writes to. */
@Injectable()
export class Deliveries {
  private readonly seen: { type: string; id: string }[] = []

  add(type: string, id: string): void {
    this.seen.push({ type, id })
  }

  all(): { type: string; id: string }[] {
    return [...this.seen]
  }
}
