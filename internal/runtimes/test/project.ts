// A project with the packed packages installed, as a user's project has them: `pnpm pack` of
// @scheduling-kit/core and @scheduling-kit/h3, each tarball unpacked into node_modules the way
// a package manager lays it out (neither has a dependency outside the two), and the frameworks
// (h3, Hono) linked from this workspace at their locked versions. The fixtures are copied in,
// so that the runtimes resolve every package from the project, as an app's code would.
import { execFileSync } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { build } from 'esbuild'

const here = new URL('..', import.meta.url).pathname
const workspace = join(here, '..', '..')
export const fixtures = join(here, 'fixtures')

export interface Project {
  dir: string
  remove(): void
}

/** `pnpm pack` of each of `names` (packages/<name>), unpacked into `modules`/@scheduling-kit. */
function unpackInto(modules: string, names: readonly string[], packs: string): void {
  mkdirSync(join(modules, '@scheduling-kit'), { recursive: true })
  for (const name of names) {
    const tarball = execFileSync('pnpm', ['pack', '--pack-destination', packs], {
      cwd: join(workspace, 'packages', name),
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .at(-1)!
    const target = join(modules, '@scheduling-kit', name)
    mkdirSync(target)
    execFileSync('tar', ['-xzf', tarball, '-C', target, '--strip-components=1'])
  }
}

export function packedProject(): Project {
  const dir = mkdtempSync(join(tmpdir(), 'scheduling-kit-runtimes-'))
  const modules = join(dir, 'node_modules')
  unpackInto(modules, ['core', 'h3'], join(dir, 'packs'))
  for (const name of ['h3', 'hono']) {
    symlinkSync(realpathSync(join(here, 'node_modules', name)), join(modules, name), 'dir')
  }
  writeFileSync(join(dir, 'package.json'), '{ "private": true, "type": "module" }\n')
  for (const file of ['scenario.mjs', 'host.mjs', 'worker.mjs', 'worker-webhooks.mjs']) {
    copyFileSync(join(fixtures, file), join(dir, file))
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Every published package (packages/*), by folder name. */
export const PUBLISHED = readdirSync(join(workspace, 'packages')).filter((name) =>
  existsSync(join(workspace, 'packages', name, 'package.json')),
)

/**
 * A CommonJS project (`"type": "commonjs"`) with every published package packed and installed,
 * and their dependencies and peers outside the workspace linked from each package's own
 * node_modules, at their locked versions: what `npm install` of the packages gives an app.
 */
export function commonJsProject(): Project {
  const dir = mkdtempSync(join(tmpdir(), 'scheduling-kit-require-'))
  const modules = join(dir, 'node_modules')
  unpackInto(modules, PUBLISHED, join(dir, 'packs'))
  for (const name of PUBLISHED) {
    const manifest = JSON.parse(
      readFileSync(join(workspace, 'packages', name, 'package.json'), 'utf8'),
    ) as { dependencies?: object; peerDependencies?: object }
    const needed = [
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
    ]
    for (const dependency of needed) {
      const target = join(modules, dependency)
      if (dependency.startsWith('@scheduling-kit/') || existsSync(target)) continue
      const source = join(workspace, 'packages', name, 'node_modules', dependency)
      if (!existsSync(source)) continue // an optional peer the package's tests do not install
      mkdirSync(dirname(target), { recursive: true })
      symlinkSync(realpathSync(source), target, 'dir')
    }
  }
  writeFileSync(join(dir, 'package.json'), '{ "private": true, "type": "commonjs" }\n')
  copyFileSync(join(fixtures, 'consumer.cjs'), join(dir, 'consumer.cjs'))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** The bundled Worker: its path, the files of core in it, and what it imports from outside. */
export interface WorkerBundle {
  path: string
  coreFiles: string[]
  externalImports: string[]
}

/**
 * Bundles the Worker as Wrangler does for workerd: esbuild with the `workerd`, `worker` and
 * `browser` export conditions.
 */
export async function bundleWorker(
  project: Project,
  entry: 'worker.mjs' | 'worker-webhooks.mjs' = 'worker.mjs',
): Promise<WorkerBundle> {
  const path = join(project.dir, entry.replace(/\.mjs$/, '.bundle.mjs'))
  const { metafile } = await build({
    absWorkingDir: project.dir,
    entryPoints: [entry],
    outfile: path,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    metafile: true,
    logLevel: 'silent',
  })
  return {
    path,
    coreFiles: Object.keys(metafile.inputs).filter((input) =>
      input.includes('node_modules/@scheduling-kit/core/'),
    ),
    externalImports: Object.values(metafile.outputs).flatMap((output) =>
      output.imports.filter((i) => i.external).map((i) => i.path),
    ),
  }
}
