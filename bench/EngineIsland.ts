import { Effect, Layer } from "effect"
import { encodeJobOrderRecord, JobStates } from "@microdcs/job-state"
import { InProcessStation, SfcEngineProcesses, SfcRuntimeServices, type StationScript } from "@microdcs/sfc-runtime"
import { RECIPE_SCHEMA_ID } from "@microdcs/sfc"
import { JobOrderDao, storeLayer, Valkey, WorkMasterDao } from "@microdcs/store"
import { STEPS } from "./Figures.js"
import type { ServerProbe } from "./ServerProbe.js"
import { type StepLog, wallClock } from "./StepLog.js"

const SCOPE = "bench"
const STALL_MS = 60_000

/** A linear recipe of `steps` steps: one push command per step (STEPS for the comparison). */
export const linearWorkMaster = (steps: number) => ({
  ID: `wm-linear-${steps}`,
  dataschema: RECIPE_SCHEMA_ID,
  data: {
    Steps: Array.from({ length: steps }, (_, i) => ({ Name: `S${i}`, ...(i === 0 ? { Initial: true } : {}) })),
    Transitions: Array.from({ length: steps - 1 }, (_, i) => ({ Source: `S${i}`, Target: `S${i + 1}`, Condition: "true" })),
    Actions: Array.from({ length: steps }, (_, i) => ({
      Name: `a${i}`, Step: `S${i}`, Qualifier: "N", Interaction: "push_command", TypeId: `bench.step${i}.v1`, TimeoutSeconds: 60
    }))
  }
})

type Command = Parameters<NonNullable<StationScript["onCommand"]>>[0]

/**
 * One engine process of the island: the SFC runtime with its default options and an instant
 * in-process station that logs when each step's command arrived (the reply goes out at once, so
 * that is also when the step was done).
 */
export const engineInstance = (options: {
  readonly url: string
  readonly prefix: string
  readonly consumer: string
  readonly steps: StepLog
  /** The execution log (on by default, as in production); off for the log's on/off comparison. */
  readonly executionLog?: boolean
}) => {
  const onCommand = (command: Command) => {
    options.steps.record(command.jobId, Number(command.action.slice(1)), wallClock())
    return {}
  }
  return SfcEngineProcesses({ consumer: options.consumer, directSend: true, executionLog: options.executionLog ?? true }).pipe(
    Layer.provideMerge(InProcessStation({ onCommand }).layer),
    Layer.provideMerge(SfcRuntimeServices),
    Layer.provideMerge(storeLayer({ url: options.url, prefix: options.prefix, connectionName: `bench-${options.consumer}` }))
  )
}

/** Stores the `steps`-step work master; needs the island's store. */
export const putWorkMaster = (steps: number = STEPS) =>
  Effect.flatMap(WorkMasterDao, (workMasters) => {
    const workMaster = linearWorkMaster(steps)
    return workMasters.put({ id: workMaster.ID, scope: SCOPE, doc: JSON.stringify(workMaster), expectedVersion: -1 })
  })

/**
 * Submits `jobs` job orders with StoreAndStart, as the MES would, and waits until every one has
 * completed (the probe polls the completed index). `oneAtATime` waits for each before the next.
 * Ids start at `job-{from}`; the `from` jobs before them must have completed already. Each job
 * runs the `steps`-step work master, which `putWorkMaster(steps)` stored.
 */
export const submitJobs = (probe: ServerProbe, jobs: number, oneAtATime: boolean, options: { from?: number; steps?: number } = {}) =>
  Effect.gen(function* () {
    const { from = 0, steps = STEPS } = options
    const workMasterId = linearWorkMaster(steps).ID
    const jobOrders = yield* JobOrderDao
    const valkey = yield* Valkey
    const completed = valkey.keys.key("jobResponseByState", { scope: SCOPE, state: "Ended_Completed" }) as string
    // A bench that hangs says nothing: no job completing for STALL_MS ends the run.
    let progress = { count: 0, at: performance.now() }
    const untilCompleted = (n: number) =>
      Effect.gen(function* () {
        for (;;) {
          const count = yield* Effect.promise(() => probe.scard(completed))
          if (count >= n) return
          if (count !== progress.count) progress = { count, at: performance.now() }
          if (performance.now() - progress.at > STALL_MS) {
            return yield* Effect.die(new Error(`engine bench: no job completed for ${STALL_MS / 1000} s (${count} of ${n} done)`))
          }
          yield* Effect.sleep(oneAtATime ? "1 millis" : "20 millis")
        }
      })
    yield* Effect.forEach(
      Array.from({ length: jobs }, (_, i) => from + i),
      (i) =>
        jobOrders
          .put({
            id: `job-${i}`, scope: SCOPE, priority: 1, expectedVersion: 0, change: "StoreAndStart",
            doc: encodeJobOrderRecord({ JobOrderID: `job-${i}`, WorkMasterID: [{ ID: workMasterId }] }, JobStates.AllowedToStart_Ready)
          })
          .pipe(Effect.andThen(oneAtATime ? untilCompleted(i + 1) : Effect.void)),
      { concurrency: oneAtATime ? 1 : 16, discard: true }
    )
    yield* untilCompleted(from + jobs)
  })

export const BENCH_SCOPE = SCOPE
