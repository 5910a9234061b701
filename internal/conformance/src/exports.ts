import { dirname, join } from 'node:path'
import ts from 'typescript'

/**
 * Every name each built declaration file exports, types and values alike, sorted: what a user
 * of that entry point can import. Followed through re-exports from other packages. One program
 * reads all the files, without the ambient `@types` packages: the names do not depend on them,
 * and loading them made each check several seconds slower.
 */
export function exportedNamesOf(dtsFiles: readonly string[]): string[][] {
  const program = ts.createProgram([...dtsFiles], {
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  })
  const checker = program.getTypeChecker()
  return dtsFiles.map((dtsFile) => {
    const source = program.getSourceFile(dtsFile)
    if (source === undefined) throw new Error(`${dtsFile} was not found: build the package first.`)
    const module = checker.getSymbolAtLocation(source)
    if (module === undefined) throw new Error(`${dtsFile} is not a module.`)
    return checker
      .getExportsOfModule(module)
      .map((symbol) => symbol.name)
      .sort()
  })
}

/**
 * The time-out of a test that reads declarations with the type checker: a second or two alone,
 * but 15 s were seen beside every other suite on a 2-core CI machine.
 */
export const TYPE_CHECK_TIMEOUT_MS = 60_000

/** The names one built declaration file exports (see `exportedNamesOf`). */
export function exportedNames(dtsFile: string): string[] {
  return exportedNamesOf([dtsFile])[0]!
}

/**
 * The names every adapter re-exports from core, besides its own: what an app on a framework
 * uses next to the middleware. The same on the four adapters.
 */
export const ADAPTER_REEXPORTS = [
  'createScheduling',
  'memoryStores',
  'Scheduling',
  'SchedulingOptions',
  'SchedulingStores',
  'StoreBundle',
  'CredentialCipher',
  'AnyWebhookEvent',
  'DedupeStore',
  'EVENT_TYPES',
  'Logger',
  'MemoryDedupeStore',
  'MemorySubscriptionStore',
  'MemoryTokenStore',
  'NotConnectedError',
  'OAuthFlowError',
  'OAuthRoutes',
  'OAuthRoutesOptions',
  'ReauthorizationRequiredError',
  'SecretSource',
  'SubscriptionStore',
  'TokenRecord',
  'TokenStore',
  'WebhookContext',
  'WebhookError',
  'WebhookEvent',
  'WebhookEventType',
  'WebhookHandler',
  'WebhookHandlerFn',
  'WebhookHandlerOptions',
  'WebhookQueue',
  'WebhookSubscriptions',
  'checkHealth',
  'ConnectionChange',
  'ConnectionStatus',
  'createCredentialCipher',
  'createOAuthClient',
  'createSchedulingClient',
  'createTokenManager',
  'createWebhookSubscriptions',
  'isApiError',
  'isOAuthFlowError',
  'isSchedulingError',
  'isWebhookError',
  'readConnectedKey',
  'useOpenTelemetry',
  'createDeliveryLedger',
  'createDeliveryPage',
  'DeliveryLedger',
  'DeliveryPage',
  'LedgerEntry',
  'LedgerStore',
  'MemoryLedgerStore',
  // What the guides write beside createScheduling.
  'MemorySweepStore',
  'PeriodicReport',
  'RateCap',
  'RateCapOptions',
  'RateCapStore',
  'RefreshAhead',
  'RefreshAheadOptions',
  'RefreshAheadReport',
  'RunDueOptions',
  'SweepOptions',
  'SweepReport',
  'SweepStore',
] as const

/**
 * Checks an adapter's built entry exports exactly `own` and `ADAPTER_REEXPORTS`, in its
 * declarations, and that its runtime values, imported and required, are exactly the declared ones.
 */
export async function expectAdapterExports(dist: URL, own: readonly string[]): Promise<void> {
  await expectExports(dist, [...own, ...ADAPTER_REEXPORTS])
  const { expect } = await import('vitest')
  const { fileURLToPath } = await import('node:url')
  const file = fileURLToPath(new URL('index.d.ts', dist))
  // The two calls every app makes show their doc comment in an editor.
  expect(undocumentedFunctions(file, ['schedulingWebhooks', 'schedulingOAuth'])).toEqual([])
}

/**
 * Which of `names`, functions or constants declared in a built declaration file, carry no doc
 * comment there
 * (what an editor shows on hover): a comment separated from its function by another declaration
 * is lost in the build.
 */
export function undocumentedFunctions(dtsFile: string, names: readonly string[]): string[] {
  const source = ts.createSourceFile(
    dtsFile,
    ts.sys.readFile(dtsFile) ?? '',
    ts.ScriptTarget.Latest,
    true,
  )
  const documented = new Set<string>()
  const aliases = new Map<string, { local: string; file: string | undefined }>()
  for (const statement of source.statements) {
    const hasDoc = ts.getJSDocCommentsAndTags(statement).length > 0
    if (ts.isFunctionDeclaration(statement) && statement.name !== undefined && hasDoc)
      documented.add(statement.name.text)
    // A plugin is a constant (`declare const schedulingWebhooks: FastifyPluginAsync<...>`).
    if (ts.isVariableStatement(statement) && hasDoc)
      for (const d of statement.declarationList.declarations)
        if (ts.isIdentifier(d.name)) documented.add(d.name.text)
    // `export { s as schedulingWebhooks } from './webhooks-<hash>.js'`: documented where it is
    // declared; `export { schedulingWebhooks as s }`: under its own name.
    const clause = ts.isExportDeclaration(statement) ? statement.exportClause : undefined
    if (clause === undefined || !ts.isNamedExports(clause)) continue
    const from = (statement as ts.ExportDeclaration).moduleSpecifier
    const file =
      from !== undefined && ts.isStringLiteral(from) && from.text.startsWith('./')
        ? join(dirname(dtsFile), from.text.replace(/\.js$/, '.d.ts'))
        : undefined
    for (const element of clause.elements)
      aliases.set(element.name.text, { local: (element.propertyName ?? element.name).text, file })
  }
  const isDocumented = (name: string): boolean => {
    if (documented.has(name)) return true
    const alias = aliases.get(name)
    if (alias === undefined) return false
    if (alias.file === undefined) return alias.local !== name && documented.has(alias.local)
    return undocumentedFunctions(alias.file, [alias.local]).length === 0
  }
  return names.filter((name) => !isDocumented(name))
}

/**
 * Checks a package's built entry exports exactly `names` in its declarations, and that its
 * runtime values, imported and `require()`d (the one ESM build), are exactly `values` (when
 * given) or the declared names it has at runtime.
 */
export async function expectExports(
  dist: URL,
  names: readonly string[],
  values?: readonly string[],
): Promise<void> {
  const { expect } = await import('vitest')
  const { fileURLToPath } = await import('node:url')
  const { createRequire } = await import('node:module')
  const expected = [...names].sort()
  expect(exportedNames(fileURLToPath(new URL('index.d.ts', dist)))).toEqual(expected)
  const module = (await import(new URL('index.js', dist).href)) as object
  const runtime =
    values === undefined ? expected.filter((name) => name in module) : [...values].sort()
  expect(Object.keys(module).sort()).toEqual(runtime)
  const required = createRequire(new URL('index.js', dist))('./index.js') as object
  expect(Object.keys(required).sort()).toEqual(runtime)
}
