import { type ChildProcess, fork } from 'node:child_process'
import { pathToFileURL } from 'node:url'
import type { TokenRecord, TokenStore } from '@scheduling-kit/core'
import type { ChildConfig, ChildMessage, ParentMessage } from './race-types.js'

// The refresh race's processes: started, told to go, stopped, replaced, and shut down.
export interface Racer {
  child: ChildProcess
  dead: boolean
  /** Sent SIGTERM: its callers' answers still count, it exits after. */
  terminating?: boolean
  done?: (results: string[]) => void
}

export function moduleUrl(module: string | URL): string {
  if (module instanceof URL) return module.href
  return module.startsWith('file:') ? module : pathToFileURL(module).href
}

export function spawnRacer(
  config: ChildConfig,
  onEvent: (racer: Racer, event: 'refreshing' | 'answered') => void,
): Promise<Racer> {
  const child = fork(new URL('./race-child.js', import.meta.url), [JSON.stringify(config)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const racer: Racer = { child, dead: false }
  return new Promise<Racer>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('a race process did not start in 30 s')),
      30_000,
    )
    child.once('exit', (code, signal) => {
      racer.dead = true
      clearTimeout(timer)
      reject(new Error(`a race process exited (${code ?? signal}) before it was ready`))
      // Mid-round, a process that died on its own (not killed by the race) fails its callers.
      if (!racer.terminating) racer.done?.([`error:process_exited_${code ?? signal}`])
      else racer.done?.([])
    })
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') {
        clearTimeout(timer)
        resolve(racer)
      } else if (message.type === 'refreshing' || message.type === 'answered')
        onEvent(racer, message.type)
      else {
        const done = racer.done
        racer.done = undefined
        done?.(message.results)
      }
    })
  })
}

/** How far each expiry moves the racers' clocks on: past a 2-hour token's lifetime. */
export const ROUND_MS = 7_201_000

/**
 * An expiry: the racers' clocks are `offset` ahead of this one (each keeps its token in memory
 * until its refresh time by its own clock, as hours passing would end), and the stored record
 * is expired at that time.
 */
export async function expire(store: TokenStore, key: string, offset: number): Promise<void> {
  const { version: _, ...record } = (await store.get(key)) as TokenRecord
  await store.set(key, {
    ...record,
    expiresAt: Date.now() + offset - 1_000,
    obtainedAt: Date.now() + offset - ROUND_MS,
  })
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** Resolves once the process has exited. */
export function exited(racer: Racer): Promise<void> {
  return new Promise<void>((resolve) => {
    if (racer.child.exitCode !== null || racer.child.signalCode !== null) return resolve()
    racer.child.once('exit', () => resolve())
  })
}

/** Tells every live process to exit; kills one that has not within 5 s. */
export async function shutDown(racers: readonly Racer[]): Promise<void> {
  for (const racer of racers) {
    if (!racer.dead) racer.child.send({ type: 'exit' } satisfies ParentMessage)
  }
  await Promise.all(
    racers.map((racer) => {
      const timer = setTimeout(() => racer.child.kill('SIGKILL'), 5_000)
      return exited(racer).finally(() => clearTimeout(timer))
    }),
  )
}
