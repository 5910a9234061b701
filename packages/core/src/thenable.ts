/** Whether a value is a promise (or another thenable): hot paths await only those. */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | undefined)?.then === 'function'
}
