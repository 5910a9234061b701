import { fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { ConfigError } from '@scheduling-kit/core'
import { moduleUrl } from './race-racers.js'

// Several OS processes share one rate through a `RateCapStore`: every turn any of them was given,
// in order, is spaced from the one before by the rate it was given at, and a 429 one of them
// answers lowers the rate the others are given.

export interface RateCapRaceOptions {
  /** A module exporting `createStore()`, giving a `RateCapStore` that every process shares. */
  storeModule: string | URL
  /** OS processes. Default 3. */
  processes?: number
  /** Turns each takes. Default 40. */
  turns?: number
  /** The rate. Default 50 a second. */
  perSecond?: number
  /** The first process answers a 429 after this many turns of its own. Default 10; 0 for none. */
  throttleAfter?: number
}

/** What the race saw: each turn given (by whom), and every broken promise. */
export interface RateCapRaceReport {
  turns: { at: number; perSecond: number; process: number }[]
  problems: string[]
}

/** @internal What a race process is given. */
export interface RateRaceChild {
  storeModule: string
  name: string
  perSecond: number
  turns: number
  throttles: boolean
  throttleAfter: number
}

/** @internal What a race process tells. */
export type RateRaceMessage = { ready: true } | { turns: { at: number; perSecond: number }[] }

/**
 * Runs the race and reports. Turns are checked as the store gave them, not by when requests
 * went: a busy machine cannot make it pass or fail.
 *
 * @example
 * ```ts
 * // rate-store.mjs: export const createStore = () => new RedisSweepStore({ client: new Redis() })
 * const report = await runRateCapRace({ storeModule: new URL('./rate-store.mjs', import.meta.url) })
 * expect(report.problems).toEqual([])
 * ```
 */
export async function runRateCapRace(options: RateCapRaceOptions): Promise<RateCapRaceReport> {
  if (options?.storeModule === undefined)
    throw new ConfigError('runRateCapRace: storeModule must name a module exporting createStore().')
  const processes = options.processes ?? 3
  const throttleAfter = options.throttleAfter ?? 10
  const base = {
    storeModule: moduleUrl(options.storeModule),
    name: `race_${randomBytes(6).toString('hex')}`,
    perSecond: options.perSecond ?? 50,
    turns: options.turns ?? 40,
    throttleAfter,
  }
  const children = Array.from({ length: processes }, (_, index) => {
    const config: RateRaceChild = { ...base, throttles: index === 0 && throttleAfter > 0 }
    const child = fork(new URL('./rate-race-child.js', import.meta.url), [JSON.stringify(config)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    const messages: RateRaceMessage[] = []
    const waiters: (() => void)[] = []
    child.on('message', (message: RateRaceMessage) => {
      messages.push(message)
      for (const wake of waiters.splice(0)) wake()
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    const next = async (index: number) => {
      while (messages.length <= index) {
        const told = new Promise<void>((resolve) => waiters.push(resolve))
        const ended = exited.then(() => {
          throw new Error('a rate race process ended before it told its turns')
        })
        await Promise.race([told, ended])
      }
      return messages[index]!
    }
    return { child, next, exited }
  })
  try {
    await Promise.all(children.map((c) => c.next(0)))
    for (const c of children) c.child.send('go')
    const told = await Promise.all(children.map((c) => c.next(1)))
    const codes = await Promise.all(children.map((c) => c.exited))
    const turns = told
      .flatMap((m, process) => ('turns' in m ? m.turns.map((t) => ({ ...t, process })) : []))
      .sort((a, b) => a.at - b.at)
    return { turns, problems: problemsOf(turns, codes, { processes, ...base }) }
  } finally {
    for (const c of children) c.child.kill('SIGKILL')
  }
}

function problemsOf(
  turns: RateCapRaceReport['turns'],
  codes: (number | null)[],
  race: { processes: number; turns: number; throttleAfter: number; perSecond: number },
): string[] {
  const problems: string[] = []
  if (codes.some((code) => code !== 0)) problems.push(`a process exited with ${codes.join(', ')}`)
  if (turns.length !== race.processes * race.turns)
    problems.push(`${turns.length} turns given, of ${race.processes * race.turns} taken`)
  for (let i = 1; i < turns.length; i++) {
    const gap = turns[i]!.at - turns[i - 1]!.at
    const least = 1_000 / turns[i]!.perSecond
    if (gap < least - 1e-6)
      problems.push(`turn ${i} came ${gap.toFixed(3)} ms after the one before, under ${least} ms`)
  }
  if (race.throttleAfter > 0)
    for (let p = 1; p < race.processes; p++)
      if (!turns.some((t) => t.process === p && t.perSecond < race.perSecond))
        problems.push(`process ${p} was never given the rate the 429 lowered`)
  return problems
}
