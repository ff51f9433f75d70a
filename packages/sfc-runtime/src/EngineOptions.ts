import { Config, type Effect, Schema } from "effect"
import { COUNTER_RECHECK_MS } from "@microdcs/sfc"

/** How the SFC runtime of one island behaves; every field has a production default. */
export interface EngineOptions {
  /** Sends of one push command before it fails. */
  readonly maxAttempts: number
  /**
   * How often the counters a waiting step's transitions read (v1.1.0 recipes) are read again:
   * nothing signals a counter's change, so the timer sweep asks at this interval.
   */
  readonly counterRecheckMs: number
  /** How often the timer sweep runs. */
  readonly sweepIntervalMs: number
  /** A heartbeat older than this means the island was down: deadlines inside the outage move back. */
  readonly outageThresholdMs: number
  /** How often reconcile looks for jobs a lost change entry could have stranded. */
  readonly reconcileIntervalMs: number
  /** Consumer groups of the engine on `sfc:work:{scope}` and on `changes:{scope}`. */
  readonly workGroup: string
  readonly changesGroup: string
  /** This instance's consumer name in both groups. */
  readonly consumer?: string | undefined
  /** Entries handled at once per poller. */
  readonly concurrency: number
  /** Fallback poll interval of both pollers (nudges make it faster). */
  readonly fallbackIntervalMs: number
  /** An entry pending this long on a dead consumer is taken over. */
  readonly claimIdleMs: number
  /** How often each poller looks for such orphans. */
  readonly claimIntervalMs: number
  /** On shutdown, how long in-flight handlers may take to finish; the rest stay pending for another instance. */
  readonly shutdownGraceMs: number
  /** How long a command's correlation id finds its job (replies later than this are ignored). */
  readonly correlationTtlMs: number
  /** How often the work stream is trimmed below what every group acknowledged (0 = never). */
  readonly workTrimIntervalMs: number
  /**
   * Send a command from the instance that won its CAS, at once, with the outbox entry as the
   * crash fallback (the hot path; on by default). Off: every command goes through the outbox
   * handler, one work-stream read later.
   */
  readonly directSend: boolean
  /** Write the execution log, best effort, off the critical path. */
  readonly executionLog: boolean
  /** Executions the log keeps in Valkey; the oldest closed ones beyond are removed (every 100th open), never a running one. */
  readonly executionLogCap: number
  /** Log writes waiting to be written at most; beyond, they are dropped and counted. */
  readonly executionLogQueueSize: number
  /** A node's result, reply or error is cut to this many bytes of JSON, with a marker. */
  readonly executionLogDetailBytes: number
  /**
   * Test seam, unset in production: runs after a start read its job orders and before it creates
   * their executions, so a test can land an MES write in that window without sleeping.
   */
  readonly afterStartReadForTest?: ((jobIds: ReadonlyArray<string>) => Effect.Effect<void>) | undefined
}

export const defaultEngineOptions: EngineOptions = {
  maxAttempts: 3,
  counterRecheckMs: COUNTER_RECHECK_MS,
  sweepIntervalMs: 500,
  outageThresholdMs: 10_000,
  reconcileIntervalMs: 30_000,
  workGroup: "sfc-engine",
  changesGroup: "sfc-engine",
  concurrency: 16,
  fallbackIntervalMs: 1000,
  claimIdleMs: 30_000,
  claimIntervalMs: 5_000,
  shutdownGraceMs: 10_000,
  correlationTtlMs: 24 * 60 * 60 * 1000,
  workTrimIntervalMs: 10_000,
  directSend: true,
  executionLog: true,
  executionLogCap: 5000,
  executionLogQueueSize: 10_000,
  executionLogDetailBytes: 4096
}

/** A whole number of at least `min`, or a config error naming the variable's bound. */
const atLeast = (name: string, min: number) =>
  Config.schema(Schema.Int.check(Schema.makeFilter((n: number) => n >= min || `must be a whole number of at least ${min}`)), name)

/** Reads the options from `SFC_*` environment variables, falling back to the defaults. */
export const engineOptionsConfig: Config.Config<EngineOptions> = Config.all({
  maxAttempts: Config.Int("SFC_MAX_ATTEMPTS").pipe(Config.withDefault(defaultEngineOptions.maxAttempts)),
  counterRecheckMs: Config.Int("SFC_COUNTER_RECHECK_MS").pipe(Config.withDefault(defaultEngineOptions.counterRecheckMs)),
  sweepIntervalMs: Config.Int("SFC_SWEEP_INTERVAL_MS").pipe(Config.withDefault(defaultEngineOptions.sweepIntervalMs)),
  outageThresholdMs: Config.Int("SFC_OUTAGE_THRESHOLD_MS").pipe(Config.withDefault(defaultEngineOptions.outageThresholdMs)),
  reconcileIntervalMs: Config.Int("SFC_RECONCILE_INTERVAL_MS").pipe(Config.withDefault(defaultEngineOptions.reconcileIntervalMs)),
  workGroup: Config.String("SFC_WORK_GROUP").pipe(Config.withDefault(defaultEngineOptions.workGroup)),
  changesGroup: Config.String("SFC_CHANGES_GROUP").pipe(Config.withDefault(defaultEngineOptions.changesGroup)),
  concurrency: Config.Int("SFC_CONCURRENCY").pipe(Config.withDefault(defaultEngineOptions.concurrency)),
  fallbackIntervalMs: Config.Int("SFC_FALLBACK_INTERVAL_MS").pipe(Config.withDefault(defaultEngineOptions.fallbackIntervalMs)),
  claimIdleMs: Config.Int("SFC_CLAIM_IDLE_MS").pipe(Config.withDefault(defaultEngineOptions.claimIdleMs)),
  claimIntervalMs: Config.Int("SFC_CLAIM_INTERVAL_MS").pipe(Config.withDefault(defaultEngineOptions.claimIntervalMs)),
  shutdownGraceMs: Config.Int("SFC_SHUTDOWN_GRACE_MS").pipe(Config.withDefault(defaultEngineOptions.shutdownGraceMs)),
  correlationTtlMs: Config.Int("SFC_CORRELATION_TTL_MS").pipe(Config.withDefault(defaultEngineOptions.correlationTtlMs)),
  workTrimIntervalMs: Config.Int("SFC_WORK_TRIM_INTERVAL_MS").pipe(Config.withDefault(defaultEngineOptions.workTrimIntervalMs)),
  directSend: Config.Boolean("SFC_DIRECT_SEND").pipe(Config.withDefault(defaultEngineOptions.directSend)),
  executionLog: Config.Boolean("SFC_EXECUTION_LOG").pipe(Config.withDefault(defaultEngineOptions.executionLog)),
  executionLogCap: atLeast("SFC_EXECUTION_LOG_CAP", 0).pipe(Config.withDefault(defaultEngineOptions.executionLogCap)),
  executionLogQueueSize: atLeast("SFC_EXECUTION_LOG_QUEUE_SIZE", 0).pipe(Config.withDefault(defaultEngineOptions.executionLogQueueSize)),
  executionLogDetailBytes: atLeast("SFC_EXECUTION_LOG_DETAIL_BYTES", 16).pipe(Config.withDefault(defaultEngineOptions.executionLogDetailBytes))
})
