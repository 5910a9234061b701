import type { VirtualClock } from './clock.js'

// The service's token endpoint as the simulation models it: each account's grant with one
// live refresh token, rotated at every refresh (a spent one is refused: strict rotation), a
// 2-hour access token. It counts refreshes by minute of the virtual clock.

export class TokenModel {
  /** The live refresh token of each account, and the account of each live one. */
  readonly #live = new Map<string, string>()
  readonly #accountOf = new Map<string, string>()
  #next = 0
  /** Refreshes answered with new tokens, and spent or unknown refresh tokens refused. */
  readonly counts = { refreshed: 0, refused: 0 }
  /** Refreshes answered, by minute since the epoch. */
  readonly byMinute = new Map<number, number>()

  constructor(readonly clock: VirtualClock) {}

  /** An account's first tokens (the connection made before the simulation). */
  grant(account: string): { accessToken: string; refreshToken: string } {
    const refreshToken = this.#rotate(account)
    return { accessToken: `at_${this.#next}`, refreshToken }
  }

  /** Whether `refreshToken` is the account's live one: its connection still stands. */
  live(account: string, refreshToken: string | undefined): boolean {
    return refreshToken !== undefined && this.#live.get(account) === refreshToken
  }

  /** `POST /oauth/token` with `grant_type=refresh_token`. */
  refresh(form: URLSearchParams): { status: number; body: unknown } {
    const account = this.#accountOf.get(form.get('refresh_token') ?? '')
    if (account === undefined) {
      this.counts.refused++
      return { status: 400, body: { error: 'invalid_grant' } }
    }
    this.counts.refreshed++
    const minute = Math.floor(this.clock.now() / 60_000)
    this.byMinute.set(minute, (this.byMinute.get(minute) ?? 0) + 1)
    return {
      status: 200,
      body: {
        access_token: `at_${this.#next + 1}`,
        refresh_token: this.#rotate(account),
        expires_in: 7_200,
        token_type: 'bearer',
      },
    }
  }

  #rotate(account: string): string {
    const spent = this.#live.get(account)
    if (spent !== undefined) this.#accountOf.delete(spent)
    const token = `rt_${++this.#next}`
    this.#live.set(account, token)
    this.#accountOf.set(token, account)
    return token
  }
}
