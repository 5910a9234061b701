import { serverText } from '../errors/errors.js'

// What the ledger's entries do not show: requests answered without a run. A refused request
// (a bad signature, a body too large) was never verified, so it is never written to the store;
// a duplicate changes no entry. The last ones of this process are kept in memory for the
// delivery page, bounded, each field cleaned and capped (the sender chose them).

/** A request answered without running its handlers, as the delivery page lists it. */
export interface RecentAnswer {
  /** `refused`: not verified (never recorded); `duplicate`: a delivery handled already. */
  kind: 'refused' | 'duplicate'
  /** When it was answered, in ms since the epoch. */
  at: number
  /** The HTTP status it was answered. */
  status: number
  /** The refusal's code (`signature_invalid`, `body_too_large`, ...). */
  code?: string
  /** The ledger id of a duplicate. */
  id?: string
  /** The event type of a duplicate. */
  type?: string
  /** The webhook id the request named (unverified for a refusal: shown as sent, cleaned). */
  webhookId?: string
}

/** How many answers are kept. */
export const RECENT_ANSWERS = 100

/** The last `RECENT_ANSWERS` answers, oldest dropped first. */
export class RecentAnswers {
  readonly #ring: RecentAnswer[] = []

  note(answer: RecentAnswer): void {
    const kept: RecentAnswer = { kind: answer.kind, at: answer.at, status: answer.status }
    if (answer.code !== undefined) kept.code = serverText(answer.code, 64)
    if (answer.id !== undefined) kept.id = serverText(answer.id, 300)
    if (answer.type !== undefined) kept.type = serverText(answer.type, 100)
    if (answer.webhookId !== undefined) kept.webhookId = serverText(answer.webhookId, 64)
    this.#ring.push(kept)
    if (this.#ring.length > RECENT_ANSWERS) this.#ring.shift()
  }

  /** Newest first. */
  list(): RecentAnswer[] {
    return this.#ring.map((a) => ({ ...a })).reverse()
  }
}
