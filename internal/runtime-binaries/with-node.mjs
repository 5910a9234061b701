#!/usr/bin/env node
// Runs a command on one Node of the matrix: `with-node.mjs node22 vitest run`. The Node is
// fetched into the cache when missing, and its folder goes first on PATH, so the command and
// every `node` it starts (package bins, child processes) run on it. For packages whose
// dependencies need a newer Node than the repository's minimum.
import { spawnSync } from 'node:child_process'
import { dirname } from 'node:path'
import { nodeBinary } from './index.mjs'

const [name, command, ...args] = process.argv.slice(2)
if (name === undefined || command === undefined) {
  console.error('usage: with-node.mjs <node20|node22|node24> <command> [args...]')
  process.exit(2)
}
const node = await nodeBinary(name)
if (node.path === undefined) {
  console.error(`${name} (${node.version}): ${node.unavailable ?? node.missing}`)
  process.exit(1)
}
const result = spawnSync(command, args, {
  stdio: 'inherit',
  env: { ...process.env, PATH: `${dirname(node.path)}:${process.env.PATH}` },
})
process.exit(result.status ?? 1)
