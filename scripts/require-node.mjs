// The toolchain's Node: 22.12 or newer. `pnpm install` puts a Node 24 binary from the npm registry
// in node_modules/.bin (the root's optional dependency node-<platform>), and pnpm runs every
// script with it first on PATH, whatever Node runs pnpm itself. Where the registry has no such
// package for the platform, the machine's own Node runs the scripts: this says so when it is too
// old. Run as a script (`node scripts/require-node.mjs`) or imported.
const FETCHED = ['linux-x64', 'linux-arm64', 'darwin-x64']
const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 12)) {
  const platform = `${process.platform}-${process.arch}`
  const how = FETCHED.includes(platform)
    ? 'Run it through pnpm after `pnpm install` (`pnpm test`, `pnpm demo`): pnpm install fetches Node 24 into node_modules/.bin, and pnpm runs scripts on it.'
    : `The npm registry has no Node 24 package for ${platform}: install Node 22.12+ yourself.`
  console.error(
    `scheduling-kit needs Node 22.12 or newer; this is ${process.version} (${process.execPath}). ${how}`,
  )
  process.exit(1)
}
