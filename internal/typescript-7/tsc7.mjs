#!/usr/bin/env node
// `tsc7 <args>`: TypeScript 7's own `tsc` with the arguments given. It cannot be the workspace's
// `tsc`: two packages named typescript would race for that one command name in node_modules/.bin.
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

const manifest = createRequire(import.meta.url).resolve('typescript/package.json')
await import(new URL('lib/tsc.js', pathToFileURL(manifest)).href)
