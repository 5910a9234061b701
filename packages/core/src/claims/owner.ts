// One owner-id scheme for everything that claims or leases (deliveries, refresh leases,
// subscription leases, queue jobs): a random prefix per process and a counter, so an owner is
// unique across processes and cheap to make.

// Drawn on the first claim, not at import: workerd refuses random values in a module's global
// scope, and would refuse to load the whole module.
let ownerPrefix: string | undefined
let ownerCount = 0

/** An owner unique to this call, across processes: a random prefix per process and a counter. */
export function newOwnerId(): string {
  ownerPrefix ??= globalThis.crypto.randomUUID()
  return `${ownerPrefix}-${(++ownerCount).toString(36)}`
}
