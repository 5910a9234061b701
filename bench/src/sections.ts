import { adapterBench, hostileHeaderBench } from './adapters.js'
import { bytesBench } from './bytes.js'
import { cipherBench } from './cipher.js'
import { crashWindowBench } from './crash.js'
import { dedupeBench } from './dedupe.js'
import { fakeServiceBench } from './fake-service.js'
import { handleBench } from './handle.js'
import type { Target } from './harness.js'
import { instructionsBench } from './instructions.js'
import { ledgerBench } from './ledger.js'
import { ledgerBytesBench } from './ledger-bytes.js'
import { ledgerInstructionsBench } from './ledger-instructions.js'
import { pgGrowthBench } from './pg-growth.js'
import { pgRetentionBench } from './pg-retention.js'
import { queuesBench } from './queues.js'
import { redisSweepBench } from './redis-sweep.js'
import { rerunBench } from './rerun.js'
import { runtimesBench } from './runtimes.js'
import { simulationBench } from './simulation.js'
import { startUpBench } from './start-up.js'
import { storesBench } from './stores.js'
import { subscriptionsBench } from './subscriptions.js'
import { tarballsBench } from './tarballs.js'
import { telemetryBench } from './telemetry.js'
import { tokenBench } from './tokens.js'
import { verifyBench } from './verify.js'

// Every section, in the order a whole run takes them; BENCH_ONLY=<name>,<name> picks some.
export const SECTIONS: readonly (readonly [string, () => Target[] | Promise<Target[]>])[] = [
  ['verify', verifyBench],
  ['handle', handleBench],
  ['telemetry', telemetryBench],
  ['tokens', tokenBench],
  ['dedupe', dedupeBench],
  ['ledger', ledgerBench],
  ['ledgerinstructions', ledgerInstructionsBench],
  ['ledgerbytes', ledgerBytesBench],
  ['queues', queuesBench],
  ['stores', storesBench],
  ['pggrowth', pgGrowthBench],
  ['subscriptions', subscriptionsBench],
  ['redissweep', redisSweepBench],
  ['cipher', cipherBench],
  ['crash', crashWindowBench],
  ['adapters', adapterBench],
  ['instructions', instructionsBench],
  ['hostile', hostileHeaderBench],
  ['runtimes', runtimesBench],
  ['rerun', rerunBench],
  ['startup', startUpBench],
  ['tarballs', tarballsBench],
  ['bytes', bytesBench],
  ['fakeservice', fakeServiceBench],
  ['pgretention', pgRetentionBench],
  ['simulation', simulationBench],
]
