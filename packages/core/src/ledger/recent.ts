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

/** How many answers of each kind are kept. */
export const RECENT_ANSWERS = 100

/** How many answers of each kind were dropped to keep the bound. */
export interface RecentDropped {
  refused: number
  duplicate: number
}

/**
 * The last `RECENT_ANSWERS` answers of each kind, oldest dropped first: anonymous refusals
 * (anyone can send them) never push out the duplicates of verified deliveries.
 */
export class RecentAnswers {
  // Each answer with its place in the order they were noted.
  readonly #rings: Record<RecentAnswer['kind'], [number, RecentAnswer][]> = {
    refused: [],
    duplicate: [],
  }
  readonly #dropped: RecentDropped = { refused: 0, duplicate: 0 }
  #noted = 0

  note(answer: RecentAnswer): void {
    const kind = answer.kind === 'duplicate' ? 'duplicate' : 'refused'
    const kept: RecentAnswer = { kind, at: answer.at, status: answer.status }
    if (answer.code !== undefined) kept.code = serverText(answer.code, 64)
    if (answer.id !== undefined) kept.id = serverText(answer.id, 300)
    if (answer.type !== undefined) kept.type = serverText(answer.type, 100)
    if (answer.webhookId !== undefined) kept.webhookId = serverText(answer.webhookId, 64)
    const ring = this.#rings[kind]
    ring.push([this.#noted++, kept])
    if (ring.length > RECENT_ANSWERS) {
      ring.shift()
      this.#dropped[kind]++
    }
  }

  /** Newest first, both kinds. */
  list(): RecentAnswer[] {
    return [...this.#rings.refused, ...this.#rings.duplicate]
      .sort((a, b) => b[0] - a[0])
      .map(([, a]) => ({ ...a }))
  }

  /** How many answers of each kind are no longer held. */
  dropped(): RecentDropped {
    return { ...this.#dropped }
  }
}
