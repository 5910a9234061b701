// The adapter kit's decisions, once for every adapter: the body to verify, the mount.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  mountPathOf,
  nodeBody,
  normalMount,
  optionsOf,
  underMount,
} from '../../src/entries/adapter.js'

describe('underMount', () => {
  it('gives the path and query inside the mount, "/" at its root, undefined off it', () => {
    const mount = normalMount('/auth/scheduling/')
    expect(mount).toBe('/auth/scheduling')
    expect(underMount('/auth/scheduling/login?returnTo=%2F', mount)).toBe('/login?returnTo=%2F')
    expect(underMount('/auth/scheduling', mount)).toBe('/')
    expect(underMount('/auth/scheduling?x=1', mount)).toBe('/?x=1')
    expect(underMount('/auth/schedulingX/login', mount)).toBeUndefined()
    expect(underMount('/other/auth/scheduling/login', mount)).toBeUndefined()
    expect(underMount('/x?/auth/scheduling/login', mount)).toBeUndefined()
  })

  it('property: a path under the mount comes back as it was; no other path is under it', () => {
    const segment = fc.stringMatching(/^[a-z%0-9.]{1,8}$/)
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 1, maxLength: 3 }),
        fc.array(segment, { maxLength: 3 }),
        fc.option(fc.stringMatching(/^[a-z=&/]{0,10}$/), { nil: undefined }),
        (mountParts, inner, query) => {
          const mount = `/${mountParts.join('/')}`
          const path = `/${inner.join('/')}${query === undefined ? '' : `?${query}`}`
          expect(underMount(mount + (path === '/' ? '' : path), mount) ?? '').toMatch(
            path === '/' ? /^\/$/ : new RegExp(`^${path.replace(/[?.*+^$()[\]{}|\\]/g, '\\$&')}$`),
          )
          expect(underMount(`${mount}x${path}`, mount)).toBeUndefined()
        },
      ),
    )
  })

  it('mountPathOf counts segments, whatever the encoding of either side', () => {
    expect(mountPathOf('/auth/scheduling/%6Cogin', '/login')).toBe('/auth/scheduling')
    expect(mountPathOf('/login', '/login')).toBe('')
  })
})

describe('nodeBody', () => {
  const unread = { readableDidRead: false, readableEnded: false }
  const read = { readableDidRead: true, readableEnded: true }
  it('the untouched stream first, then kept raw bytes, then what a parser left', () => {
    const of = (kept: unknown, parsed: unknown) => ({ kept, parsed })
    const kept = (h: { kept: unknown }) => h.kept
    const parsed = (h: { parsed: unknown }) => h.parsed
    const notRead = () => {
      throw new Error('an untouched stream must not look for a kept or parsed body')
    }
    expect(nodeBody(unread, of('kept', {}), notRead, notRead)).toBe(unread)
    expect(nodeBody(read, of('kept', { parsed: true }), kept, parsed)).toBe('kept')
    const bytes = new Uint8Array([1])
    expect(nodeBody(read, of(undefined, bytes), kept, parsed)).toBe(bytes)
    expect(nodeBody(read, of(42, { parsed: true }), kept, parsed)).toEqual({ parsed: true })
    expect(nodeBody(read, of(undefined, undefined), kept, parsed)).toEqual({})
  })
})

describe('optionsOf', () => {
  it('finds the options object in either argument', () => {
    expect(optionsOf('secret', { forwardErrors: true })).toEqual({ forwardErrors: true })
    expect(optionsOf({ secret: 's', forwardErrors: true }, undefined)).toMatchObject({
      forwardErrors: true,
    })
    expect(optionsOf('secret', undefined)).toEqual({})
  })
})
