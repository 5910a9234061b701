// `pnpm bench --quick`: every section and every headline row with its anchor, at sizes a
// contributor's machine gets through in one sitting (at most 15 minutes on 2 cores). Each is a
// variable a section already reads; one set by hand wins. The full run's sizes are in each
// section; RESULTS.md says which run made each row.
export const QUICK_SIZES: Readonly<Record<string, string>> = {
  // Paired rounds of the measured cases (harness.ts): a third, at least 7.
  BENCH_QUICK: '1',
  // Adapters: 3 rounds of 1 s per framework (5 x 2 s).
  BENCH_ROUNDS: '3',
  BENCH_SECONDS: '1',
  // Crash windows: 60 kills (300).
  BENCH_CRASH_ROUNDS: '60',
  // The fake service at 1,000 and 100,000 accounts (a million).
  BENCH_FAKE_ACCOUNTS: '1000,100000',
  // Instructions under callgrind: the 2 KiB body only (2 KiB and 1 MiB), after 1,000 warm
  // requests, 3 windows of 200 (4,000, 5 of 400); one process a count (3): the spread printed
  // is then the windows' of that process.
  BENCH_INSTRUCTION_SIZES: '2048',
  BENCH_INSTRUCTION_WARM: '1000',
  BENCH_INSTRUCTION_COUNT: '200',
  BENCH_INSTRUCTION_WINDOWS: '3',
  BENCH_CALLGRIND_PROCESSES: '1',
  // Start-up: one process an import (three): its counts agree within 0.07% between processes.
  BENCH_STARTUP_PROCESSES: '1',
  // The re-run trials of the queues: 2 (3).
  BENCH_RERUN_TRIALS: '2',
  // The ledger's instructions: 300 deliveries in 5 windows (1,000 in 9).
  BENCH_LEDGER_COUNT: '300',
  BENCH_LEDGER_WINDOWS: '5',
  // The ledger's bytes: 10,000 deliveries a store (100,000).
  BENCH_LEDGER_DELIVERIES: '10000',
  // PostgreSQL growth: 50,000 deliveries (a million); retention: 100,000 entries (a million).
  BENCH_PG_DELIVERIES: '50000',
  BENCH_RETENTION_ENTRIES: '100000',
  // Queues: 1,000 deliveries a run (3,000).
  BENCH_QUEUE_DELIVERIES: '1000',
  // The Redis sweep: up to 100,000 accounts (a million).
  BENCH_REDIS_SWEEP_MAX: '100000',
  // The simulation: 100,000 accounts, one day (a million, two).
  BENCH_SIM_ACCOUNTS: '100000',
  BENCH_SIM_DAYS: '1',
}
