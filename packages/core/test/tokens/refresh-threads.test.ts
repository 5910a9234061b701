import { Worker } from 'node:worker_threads'
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MemoryTokenStore } from '../../src/tokens/store.js'
import { answerStoreCall } from '../helpers.js'

let server: TokenServer
beforeEach(async () => {
  server = await startTokenServer()
})
afterEach(() => server.close())

/** Starts a manager in a worker thread whose store calls are served from `store` here. */
function startWorker(store: MemoryTokenStore, key: string, calls: number, withLease: boolean) {
  const worker = new Worker(new URL('../fixtures/manager-worker.mjs', import.meta.url), {
    workerData: {
      authUrl: server.url,
      clientId: server.clientId,
      clientSecret: server.clientSecret,
      redirectUri: server.redirectUri,
      key,
      calls,
      withLease,
    },
  })
  const ready = new Promise<void>((resolve) => worker.once('message', () => resolve()))
  const done = new Promise<string[]>((resolve, reject) => {
    worker.on('error', reject)
    worker.on('message', async (message) => {
      if (message.type === 'done') return resolve(message.tokens)
      if (message.type === 'store') worker.postMessage(await answerStoreCall(store, message))
    })
  })
  return {
    ready,
    done,
    go: () => worker.postMessage({ type: 'go' }),
    stop: () => worker.terminate(),
  }
}

describe('two token managers in separate threads sharing one store', () => {
  it('refresh an expired token exactly once between them when the store offers leases', async () => {
    const store = new MemoryTokenStore()
    const granted = server.grant('u1')
    await store.set('u1', {
      accessToken: granted.access_token,
      refreshToken: granted.refresh_token,
      tokenType: 'bearer',
      expiresAt: Date.now() - 1000,
      obtainedAt: Date.now() - 7_201_000,
    })
    server.setLatency(50)
    const workers = [startWorker(store, 'u1', 50, true), startWorker(store, 'u1', 50, true)]
    try {
      await Promise.all(workers.map((w) => w.ready))
      for (const w of workers) w.go()
      const [a, b] = await Promise.all(workers.map((w) => w.done))
      expect(server.counters.refresh).toBe(1)
      expect(server.counters.reuse).toBe(0)
      const all = new Set([...a!, ...b!])
      expect(all.size).toBe(1)
      const [token] = all
      expect(token).toBe((await store.get('u1'))!.accessToken)
      expect(token).not.toBe(granted.access_token)
    } finally {
      await Promise.all(workers.map((w) => w.stop()))
    }
  })
})
