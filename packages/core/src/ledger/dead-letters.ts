import { serverText } from '../errors/errors.js'
import { consoleLogger, describeError, emit } from '../log.js'
import type { LedgerEntry } from './entry.js'
import type { DeliveryLedgerOptions } from './options.js'

/**
 * A delivery became dead: logged (its id, type, attempts and cleaned error; never its body),
 * and `onDeadLetter` told. The hook's errors are logged, never thrown.
 */
export async function tellDeadLetter(
  options: Pick<DeliveryLedgerOptions, 'onDeadLetter' | 'logger'>,
  dead: LedgerEntry,
): Promise<void> {
  const logger = options.logger ?? consoleLogger
  emit(
    logger,
    'error',
    `Ledger: delivery ${dead.id} (${serverText(dead.type, 100)}) is dead after ${dead.attempts} attempts; replay it once fixed. Last error: ${dead.lastError}`,
  )
  if (options.onDeadLetter === undefined) return
  try {
    await options.onDeadLetter(dead)
  } catch (hookError) {
    emit(logger, 'error', `Ledger: onDeadLetter threw. ${describeError(hookError)}`)
  }
}
