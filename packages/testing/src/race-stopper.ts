import type { Racer } from './race-racers.js'
import type { Hold, ParentMessage, RaceStop } from './race-types.js'

// The refresh race's fault: the lease holder of a round stopped where the race's `stop` says
// (before its request leaves, after the answer arrives, at a random instant, or terminated).

/** Stops the lease holder of a round where `stop` says, once a round. */
export class Stopper {
  /** This round stops a holder. */
  round = false
  /** The holder of this round was stopped. */
  stopped = false

  constructor(
    readonly stop: RaceStop | undefined,
    readonly latency: number,
  ) {}

  /** A stop scheduled at a random instant and not yet made. */
  #pending: Promise<void> | undefined

  begin(stopRound: boolean): void {
    this.round = stopRound
    this.stopped = false
    this.#pending = undefined
  }

  /**
   * Waits for a stop scheduled at a random instant: on a busy machine the round's answers can
   * all arrive before its timer runs, and the stop then lands just after them.
   */
  async settled(): Promise<void> {
    await this.#pending
  }

  /** The hold the processes are told for this round. */
  get hold(): Hold {
    if (!this.round) return 'none'
    return this.stop === 'before-request' || this.stop === 'after-answer' ? this.stop : 'report'
  }

  #halt(racer: Racer): void {
    this.stopped = true
    if (this.stop === 'terminate') {
      racer.terminating = true
      racer.child.kill('SIGTERM')
      return
    }
    racer.dead = true
    racer.child.kill('SIGKILL')
    const done = racer.done
    racer.done = undefined
    done?.([])
  }

  onEvent = (racer: Racer, event: 'refreshing' | 'answered'): void => {
    const proceed = () => {
      racer.child.send({ type: 'proceed' } satisfies ParentMessage)
    }
    if (!this.round || this.stopped) {
      proceed()
      return
    }
    if (
      (this.stop === 'before-request' && event === 'refreshing') ||
      (this.stop === 'after-answer' && event === 'answered')
    ) {
      this.#halt(racer)
      return
    }
    if ((this.stop === 'random' || this.stop === 'terminate') && event === 'refreshing') {
      // Anywhere from before the request leaves to a little after the answer arrives.
      const delay = Math.random() * (this.latency + 40)
      this.#pending = new Promise<void>((resolve) => {
        setTimeout(() => {
          this.#halt(racer)
          resolve()
        }, delay)
      })
    }
    proceed()
  }
}
