// The status-code table of the READMEs, held to the code: each row's status is the one core
// answers for its codes, every code core answers a delivery with has a row, and every README
// that shows the table shows this one (scripts/status-table.mjs copies it).
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: a plain .mjs script, without types
import { COPIES, canonicalTable, copyIn } from '../../../../scripts/status-table.mjs'
import { WEBHOOK_ERROR_STATUS } from '../../src/index.js'

/** Codes that are no answer to a delivery: off the webhook path, or only told to `onError`. */
const NOT_IN_TABLE = new Set(['not_found', 'dedupe_evicted'])

interface Row {
  status: number
  codes: string[]
}

function rowsOf(table: string): Row[] {
  return table
    .split('\n')
    .slice(2)
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .map((cells) => ({
      status: Number(/^\d{3}/.exec(cells[2] ?? '')?.[0]),
      codes: [...(cells[3] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!),
    }))
}

describe('the status-code table', () => {
  const table: string = canonicalTable()
  const rows = rowsOf(table)

  it('gives each code the status core answers with, and has a row for every code', () => {
    expect(rows.length).toBeGreaterThan(10)
    for (const row of rows) {
      expect(row.status, JSON.stringify(row)).toBeGreaterThanOrEqual(200)
      for (const code of row.codes) {
        expect(WEBHOOK_ERROR_STATUS, code).toHaveProperty(code)
        expect(row.status, code).toBe(
          WEBHOOK_ERROR_STATUS[code as keyof typeof WEBHOOK_ERROR_STATUS],
        )
      }
    }
    const listed = new Set(rows.flatMap((row) => row.codes))
    const missing = Object.keys(WEBHOOK_ERROR_STATUS).filter(
      (code) => !listed.has(code) && !NOT_IN_TABLE.has(code),
    )
    expect(missing).toEqual([])
  })

  it('is the same in every README that shows it', () => {
    for (const file of COPIES as string[]) {
      const text = readFileSync(new URL(`../../../../${file}`, import.meta.url), 'utf8')
      expect(copyIn(text), `${file}: run node scripts/status-table.mjs`).toBe(table)
    }
  })
})
