import { adapterBench, hostileHeaderBench } from './adapters.js'
import { bytesBench } from './bytes.js'
import { cipherBench } from './cipher.js'
import { crashWindowBench } from './crash.js'
import { dedupeBench } from './dedupe.js'
import { fakeServiceBench } from './fake-service.js'
import { handleBench } from './handle.js'
import { targets } from './harness.js'
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

// BENCH_ONLY=verify,handle,telemetry,tokens,dedupe,ledger,ledgerinstructions,ledgerbytes,queues,stores,pggrowth,subscriptions,redissweep,cipher,crash,adapters,
// instructions,hostile,runtimes,rerun,startup,tarballs,bytes,fakeservice,pgretention,simulation picks sections; all by default.
const only = new Set(
  (
    process.env.BENCH_ONLY ??
    'verify,handle,telemetry,tokens,dedupe,ledger,ledgerinstructions,ledgerbytes,queues,stores,pggrowth,subscriptions,redissweep,cipher,crash,adapters,instructions,hostile,runtimes,rerun,startup,tarballs,bytes,fakeservice,pgretention,simulation'
  ).split(','),
)
const all = [
  ...(only.has('verify') ? await verifyBench() : []),
  ...(only.has('handle') ? await handleBench() : []),
  ...(only.has('telemetry') ? await telemetryBench() : []),
  ...(only.has('tokens') ? await tokenBench() : []),
  ...(only.has('dedupe') ? await dedupeBench() : []),
  ...(only.has('ledger') ? await ledgerBench() : []),
  ...(only.has('ledgerinstructions') ? await ledgerInstructionsBench() : []),
  ...(only.has('ledgerbytes') ? await ledgerBytesBench() : []),
  ...(only.has('queues') ? await queuesBench() : []),
  ...(only.has('stores') ? await storesBench() : []),
  ...(only.has('pggrowth') ? await pgGrowthBench() : []),
  ...(only.has('subscriptions') ? await subscriptionsBench() : []),
  ...(only.has('redissweep') ? await redisSweepBench() : []),
  ...(only.has('cipher') ? await cipherBench() : []),
  ...(only.has('crash') ? await crashWindowBench() : []),
  ...(only.has('adapters') ? await adapterBench() : []),
  ...(only.has('instructions') ? await instructionsBench() : []),
  ...(only.has('hostile') ? await hostileHeaderBench() : []),
  ...(only.has('runtimes') ? await runtimesBench() : []),
  ...(only.has('rerun') ? await rerunBench() : []),
  ...(only.has('startup') ? await startUpBench() : []),
  ...(only.has('tarballs') ? tarballsBench() : []),
  ...(only.has('bytes') ? await bytesBench() : []),
  ...(only.has('fakeservice') ? fakeServiceBench() : []),
  ...(only.has('pgretention') ? await pgRetentionBench() : []),
  ...(only.has('simulation') ? await simulationBench() : []),
]
const ok = targets(all)
console.log(ok ? '\nAll targets met.' : '\nSome targets were missed.')
process.exitCode = ok ? 0 : 1
