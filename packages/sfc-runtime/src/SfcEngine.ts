import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { Effect, Layer, Schedule } from "effect"
import { makePoller } from "@microdcs/poller"
import { CommandDispatch } from "./CommandDispatch.js"
import { installDirectSend } from "./DirectSend.js"
import { RecipeSnapshots } from "./RecipeSnapshots.js"
import { defaultEngineOptions, type EngineOptions } from "./EngineOptions.js"
import { Executions } from "./Executions.js"
import { ExecutionLogWriter } from "./ExecutionLogWriter.js"
import { JobOrderTransitions } from "./JobOrderTransitions.js"
import { handleChangeBatch, handleWorkBatch } from "./WorkBatches.js"
import { reconcileOnce } from "./Reconcile.js"
import { SfcEvents } from "./EventIngestion.js"
import { sweepOnce } from "./TimerSweep.js"

/** Which parts of the engine this process runs; several instances may share one island. */
export interface EngineRoles {
  /** Work/outbox and change consumers, and reconcile. */
  readonly engine: boolean
  /** The timer sweep (deadlines, heartbeat, outage grace). */
  readonly sweep: boolean
}

/** Runs `round` forever at `intervalMs`, logging (never ending on) a failed round. */
const every = <E, R>(name: string, intervalMs: number, round: Effect.Effect<unknown, E, R>) =>
  round.pipe(
    Effect.catchCause((cause) => Effect.logWarning(`${name} round failed`, cause)),
    Effect.repeat(Schedule.spaced(`${intervalMs} millis`))
  )

/**
 * The SFC runtime's processes as a scoped layer: the consumers of `sfc:work:{scope}` and
 * `changes:{scope}`, the timer sweep and the reconcile loop, all stopped when the layer's scope
 * closes (in-flight handlers finish first). Needs {@link SfcRuntimeServices} and a `StationPort`;
 * the station binding usually needs `SfcEvents` from the same services, hence the split.
 */
export const SfcEngineProcesses = (options: Partial<EngineOptions> = {}, roles: EngineRoles = { engine: true, sweep: true }) => {
  const resolved: EngineOptions = { ...defaultEngineOptions, ...options }
  // Named here, not by the poller: the direct sender marks its entries with the same name.
  const consumerName = resolved.consumer ?? `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`
  const consumer = { consumer: consumerName }
  const pollerDefaults = {
    concurrency: resolved.concurrency,
    fallbackIntervalMs: resolved.fallbackIntervalMs,
    claimIdleMs: resolved.claimIdleMs,
    claimIntervalMs: resolved.claimIntervalMs,
    shutdownGraceMs: resolved.shutdownGraceMs,
    ...consumer
  }
  const run = Effect.gen(function* () {
    // First, so that its scope closes last: the log drains after the consumers' last writes.
    if (resolved.executionLog) {
      yield* Effect.flatMap(ExecutionLogWriter, (log) =>
        log.install({ queueSize: resolved.executionLogQueueSize, cap: resolved.executionLogCap, detailBytes: resolved.executionLogDetailBytes })
      )
    }
    const directSend = roles.engine && resolved.directSend ? yield* installDirectSend(resolved, consumerName) : undefined
    if (roles.engine) {
      yield* makePoller({ kind: "sfc", stream: "sfcWork", group: resolved.workGroup, handleBatch: handleWorkBatch(resolved), ...pollerDefaults, trimIntervalMs: resolved.workTrimIntervalMs })
      yield* makePoller({ kind: "changes", stream: "changes", group: resolved.changesGroup, handleBatch: handleChangeBatch(resolved), ...pollerDefaults })
      yield* Effect.forkScoped(every("reconcile", resolved.reconcileIntervalMs, reconcileOnce(resolved)))
    }
    if (roles.sweep) yield* Effect.forkScoped(every("timer sweep", resolved.sweepIntervalMs, sweepOnce(resolved)))
    // Last, so it runs first when the engine stops (finalizers run in reverse): from then on,
    // direct sends under way get the shutdown grace, as the pollers' handlers do.
    if (directSend) yield* Effect.addFinalizer(() => directSend.stopping(resolved.shutdownGraceMs))
  })
  return Layer.effectDiscard(run)
}

/** The services the runtime is built from; also what an event-ingesting binding needs. */
export const SfcRuntimeServices = SfcEvents.Default.pipe(
  Layer.provideMerge(Executions.DefaultWithoutDependencies),
  Layer.provideMerge(Layer.mergeAll(CommandDispatch.Default, RecipeSnapshots.Default, ExecutionLogWriter.Default, JobOrderTransitions.Default))
)
