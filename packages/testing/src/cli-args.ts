import { parseArgs } from 'node:util'

// The CLI's argument parsing and usage errors, shared by its commands: each passes its own
// help text, printed under the error.

export class UsageError extends Error {}

export function usageError(message: string, help: string): never {
  throw new UsageError(`${message}\n\n${help}`)
}

export type Values = Record<string, string | boolean | string[] | undefined>
export type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>

export function parseOptions(
  help: string,
  args: string[],
  options: OptionSpec,
): { values: Values; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { ...options, help: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    })
    return { values: values as Values, positionals }
  } catch (error) {
    usageError((error as Error).message, help)
  }
}
