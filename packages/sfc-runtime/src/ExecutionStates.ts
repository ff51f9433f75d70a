import { Effect, Option } from "effect"
import type { ConnectionError, InvalidInput, SfcStateDao, WrongType } from "@microdcs/store"
import { type ExecutionState, isTerminalStatus } from "@microdcs/sfc"
import type { BoundedMap } from "./BoundedMap.js"
import type { CommandDispatch } from "./CommandDispatch.js"
import type { CounterReads } from "./CounterReads.js"
import type { ExecutionLogWriter } from "./ExecutionLogWriter.js"
import type { JobOrderTransitions } from "./JobOrderTransitions.js"
import type { RecipeSnapshots } from "./RecipeSnapshots.js"

export interface LoadedExecution {
  readonly state: ExecutionState
  readonly version: number
}

/** What the executions' functions share: the stores, the direct send, the log, and the states this process keeps. */
export interface ExecutionDeps {
  readonly states: SfcStateDao["Service"]
  readonly dispatch: CommandDispatch["Service"]
  readonly snapshots: RecipeSnapshots["Service"]
  readonly executionLog: ExecutionLogWriter["Service"]
  /** Counters named by transitions are read before the core runs (CounterReads.ts). */
  readonly counters: CounterReads
  /** Where the runtime runs (not the admin tool): a write carries its job order move and response along (WriteCarriedAlong.ts). */
  readonly jobOrders: JobOrderTransitions["Service"] | undefined
  // The states this process wrote last, with their store version: the next input of a job
  // starts from here instead of re-reading it. Another instance's write meanwhile shows as a
  // VersionConflict of the CAS, and the apply loop re-reads and recomputes.
  readonly cache: BoundedMap<string, LoadedExecution>
}

export const remember = ({ cache }: ExecutionDeps, jobId: string, loaded: LoadedExecution) => {
  if (isTerminalStatus(loaded.state.status)) cache.delete(jobId)
  else cache.set(jobId, loaded)
}

export const load = (deps: ExecutionDeps, jobId: string): Effect.Effect<Option.Option<LoadedExecution>, InvalidInput | WrongType | ConnectionError> =>
  deps.states.get(jobId).pipe(
    Effect.flatMap((doc) => {
      return deps.snapshots.decodeState(doc.doc).pipe(
        Effect.map((state) => {
          const loaded = { state, version: doc.version }
          remember(deps, jobId, loaded)
          return Option.some(loaded)
        })
      )
    }),
    Effect.catchTag("NotFound", () => Effect.sync(() => deps.cache.delete(jobId)).pipe(Effect.as(Option.none())))
  )
