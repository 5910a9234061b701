import { defineAttackCases } from './attacks.js'
import { createSuiteContext } from './context.js'
import { defineHardeningCases } from './hardening.js'
import type { AdapterHarness } from './harness.js'
import { defineLedgerCases } from './ledger.js'
import { defineOAuthAttackCases } from './oauth-attacks.js'
import { defineOAuthCases } from './oauth-cases.js'
import { defineOAuthHardeningCases } from './oauth-hardening.js'
import { defineSubscriptionCases } from './subscriptions.js'
import { defineWebhookCases } from './webhook-cases.js'

/**
 * Defines the whole conformance suite for one adapter. Call it from the adapter's test file.
 * Each area is a module of its own; they share only the context (`context.ts`).
 */
export function runConformance(harness: AdapterHarness): void {
  const ctx = createSuiteContext(harness)
  defineWebhookCases(harness, ctx)
  defineOAuthCases(harness, ctx)
  defineAttackCases(harness, ctx)
  defineOAuthAttackCases(harness, ctx)
  defineHardeningCases(harness, ctx)
  defineOAuthHardeningCases(harness, ctx)
  defineSubscriptionCases(harness, ctx)
  defineLedgerCases(harness, ctx)
}
