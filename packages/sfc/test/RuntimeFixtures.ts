import { Duration, Effect, Layer, Schedule } from "effect"
import { inject } from "vitest"
import { encodeJobOrderRecord, JobStates, type JobOrder, type JobState } from "@microdcs/job-state"
import { JobOrderDao, storeLayer, WorkMasterDao } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import {
  type EngineOptions,
  type EngineRoles,
  InProcessStation,
  SfcEngineProcesses,
  SfcRuntimeServices,
  type StationScript
} from "@microdcs/sfc"

export { fixture } from "@microdcs/test-utils"

/** Fast settings for tests: quick sweeps and polls, short claim idle. */
export const testEngineOptions: Partial<EngineOptions> = {
  sweepIntervalMs: 50,
  fallbackIntervalMs: 100,
  reconcileIntervalMs: 60_000,
  claimIdleMs: 2_000
}

/** The store over the run's server with a fresh prefix, and one engine with an in-process station. */
export const engineWorld = (
  script: StationScript,
  options: { readonly prefix?: string; readonly engine?: Partial<EngineOptions>; readonly roles?: EngineRoles } = {}
) => {
  const store = storeLayer({ url: inject("valkeyUrl"), prefix: options.prefix ?? randomPrefix("sfc") })
  const station = InProcessStation(script)
  const runtime = SfcRuntimeServices
  const layer = SfcEngineProcesses({ ...testEngineOptions, ...options.engine }, options.roles).pipe(
    Layer.provideMerge(station.layer),
    Layer.provideMerge(runtime),
    Layer.provideMerge(store)
  )
  return { layer, station: station.log }
}

/** Stores a work master document in a scope. */
export const putWorkMaster = (scope: string, workMaster: Record<string, unknown>) =>
  Effect.flatMap(WorkMasterDao, (dao) =>
    dao.put({ id: workMaster["ID"] as string, scope, doc: JSON.stringify(workMaster), expectedVersion: -1 })
  )

/** Stores a job order as the job-control processor would after `StoreAndStart`. */
export const putJobOrder = (
  scope: string,
  jobOrder: JobOrder,
  state: JobState = JobStates.AllowedToStart_Ready,
  change = "StoreAndStart"
) =>
  Effect.flatMap(JobOrderDao, (dao) =>
    dao.put({
      id: jobOrder.JobOrderID,
      scope,
      doc: encodeJobOrderRecord(jobOrder, state),
      priority: jobOrder.Priority ?? 0,
      expectedVersion: -1,
      change
    })
  )

/** Polls `check` until it returns a value, or fails after `timeoutMs`. */
export const eventually = <A, E, R>(check: Effect.Effect<A | undefined, E, R>, timeoutMs = 10_000) =>
  check.pipe(
    Effect.flatMap((value) => (value === undefined ? Effect.fail("not yet" as const) : Effect.succeed(value))),
    Effect.retry({ schedule: Schedule.spaced(Duration.millis(25)), while: (e) => e === "not yet" }),
    Effect.timeoutFail({ duration: Duration.millis(timeoutMs), onTimeout: () => new Error("condition not reached in time") })
  )
