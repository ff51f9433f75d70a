import { Effect, Result, Option } from "effect"
import { decodeJobOrderRecord } from "@microdcs/job-state"
import { type ConnectionError, JobOrderDao } from "@microdcs/store"
import type { CounterValues, EngineOutput } from "@microdcs/sfc"
import { CounterSource, type CounterSourceService, type CounterUnavailable } from "./CounterSource.js"

/**
 * Runs one core call with the counters it asks for: the core stops at the first
 * transition naming counters it has no values for, this reads them through the `CounterSource`
 * (one read per such evaluation) and calls again with them. A call that needs none (every recipe
 * without counters) runs once and reads nothing.
 */
export interface CounterReads {
  readonly run: (
    scope: string,
    jobId: string,
    call: (counters: ReadonlyArray<CounterValues>) => EngineOutput,
    /** The call's output with no counters, when the caller already has it (the core then runs once less). */
    first?: EngineOutput
  ) => Effect.Effect<EngineOutput, CounterUnavailable | ConnectionError>
}

/** The optional services counters are read through. */
interface CounterReadDeps {
  readonly source: Option.Option<CounterSourceService>
  readonly jobOrders: Option.Option<JobOrderDao["Service"]>
}

type CoreCall = (counters: ReadonlyArray<CounterValues>) => EngineOutput

// The job order as the MES sent it; a missing or unreadable one is `undefined` (the source
// then has the results alone), while a Valkey failure fails the read like the source would.
const jobOrderOf = ({ jobOrders }: CounterReadDeps, jobId: string): Effect.Effect<unknown, ConnectionError> =>
  Option.match(jobOrders, {
    onNone: () => Effect.succeed(undefined),
    onSome: (dao) =>
      dao.get(jobId).pipe(
        Effect.map((doc) => {
          const decoded = decodeJobOrderRecord(doc.doc)
          return Result.isSuccess(decoded) ? (decoded.success.jobOrder as unknown) : undefined
        }),
        Effect.catchTags({ NotFound: () => Effect.succeed(undefined), WrongType: () => Effect.succeed(undefined), InvalidInput: () => Effect.succeed(undefined) })
      )
  })

/** Reads until the core needs no more counters, calling it again after each read. */
const readAndRun = (deps: CounterReadDeps, scope: string, jobId: string, call: CoreCall, values: Array<CounterValues>, first: EngineOutput) =>
  Effect.gen(function* () {
    const { source } = deps
    let output = first
    let jobOrder: { readonly value: unknown } | undefined
    while (output.needsCounters !== undefined) {
      const need = output.needsCounters
      if (Option.isNone(source)) {
        yield* Effect.logWarning("a transition names counters but no CounterSource is provided; the job fails").pipe(
          Effect.annotateLogs({ jobId, source: need.source, counters: need.counters.join(",") })
        )
        values.push(null)
      } else {
        jobOrder ??= { value: yield* jobOrderOf(deps, jobId) }
        values.push(
          yield* source.value.read({
            scope, jobOrderId: jobId, source: need.source, counters: need.counters, results: need.results, jobOrder: jobOrder.value
          })
        )
      }
      output = call(values)
    }
    return output
  })

/** Built where the runtime is: both services are optional, so no layer has to provide them. */
export const makeCounterReads: Effect.Effect<CounterReads> = Effect.gen(function* () {
  const deps: CounterReadDeps = { source: yield* Effect.serviceOption(CounterSource), jobOrders: yield* Effect.serviceOption(JobOrderDao) }
  const run: CounterReads["run"] = (scope, jobId, call, given) => {
    const values: Array<CounterValues> = []
    const first = given ?? call(values)
    // The hot path: a call that names no counter needs no Effect of its own.
    return first.needsCounters === undefined ? Effect.succeed(first) : readAndRun(deps, scope, jobId, call, values, first)
  }
  return { run }
})
