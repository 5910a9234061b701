import { describe, expect, it } from 'vitest'
import { isWebhookError } from '../../src/errors/errors.js'
import { readBody } from '../../src/webhooks/body/streams.js'

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise
    return undefined
  } catch (error) {
    return isWebhookError(error) ? error.code : 'other'
  }
}

function countingIterable(chunks: number, size: number) {
  let pulled = 0
  const iterable: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]: () => ({
      next: async () =>
        pulled < chunks
          ? { done: false, value: new Uint8Array(size).fill(pulled++) }
          : { done: true, value: undefined },
      return: async () => {
        throw new Error('return() must not be called: it would destroy a Node request stream')
      },
    }),
  }
  return { iterable, pulled: () => pulled }
}

describe('readBody', () => {
  it('joins the chunks of an async iterable in order', async () => {
    const { iterable } = countingIterable(3, 2)
    expect(await readBody(iterable, 100)).toEqual(new Uint8Array([0, 0, 1, 1, 2, 2]))
  })

  it('stops pulling as soon as a stream passes the limit, without destroying it', async () => {
    const { iterable, pulled } = countingIterable(1000, 100)
    expect(await codeOf(readBody(iterable, 1000))).toBe('payload_too_large')
    expect(pulled()).toBe(11)
  })

  it('reads a web ReadableStream and cancels it past the limit', async () => {
    let canceled = false
    let pulls = 0
    const stream = new ReadableStream<Uint8Array>({
      pull: (c) => {
        pulls++
        c.enqueue(new Uint8Array(64))
      },
      cancel: () => {
        canceled = true
      },
    })
    expect(await codeOf(readBody(stream, 256))).toBe('payload_too_large')
    expect(canceled).toBe(true)
    expect(pulls).toBeLessThan(10)
    const ok = new ReadableStream<Uint8Array>({
      start: (c) => {
        c.enqueue(new Uint8Array([1, 2]))
        c.enqueue(new Uint8Array([3]))
        c.close()
      },
    })
    expect(await readBody(ok, 3)).toEqual(new Uint8Array([1, 2, 3]))
  })

  it('checks bytes and strings already read, measuring UTF-8 bytes', async () => {
    expect(await readBody('é', 2)).toEqual(new Uint8Array([0xc3, 0xa9]))
    expect(await codeOf(readBody('éé', 3))).toBe('payload_too_large')
    expect(await codeOf(readBody(new Uint8Array(5), 4))).toBe('payload_too_large')
    expect(await readBody(null, 4)).toEqual(new Uint8Array(0))
  })

  it('accepts string chunks (a stream with an encoding set)', async () => {
    const iterable = (async function* () {
      yield 'ab'
      yield new Uint8Array([99])
    })()
    expect(new TextDecoder().decode(await readBody(iterable, 10))).toBe('abc')
  })

  it('says body_parsed for an object a body parser made, with the advice the adapter gives', async () => {
    for (const parsed of [{ type: 'event.created' }, [1, 2], 42, true]) {
      expect(await codeOf(readBody(parsed as object, 100))).toBe('body_parsed')
    }
    await expect(readBody({}, 100, 'Use @koa/bodyparser: it keeps rawBody.')).rejects.toThrow(
      /gone\. Use @koa\/bodyparser: it keeps rawBody\.$/,
    )
    await expect(readBody({}, 100)).rejects.toThrow(/pass it the raw body as a string/)
  })
})
