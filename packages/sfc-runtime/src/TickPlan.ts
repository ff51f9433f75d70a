import { Effect, Exit } from "effect"
import { type EngineInput, type StepAllOutput, stepAll } from "@microdcs/sfc"
import type { PendingInput } from "./ApplyInbox.js"
import type { ExecutionError } from "./ApplyOutcome.js"
import { newExecutionId } from "./ExecutionLogIds.js"
import type { ExecutionDeps, LoadedExecution } from "./ExecutionStates.js"

/** One job of a tick with what the pure core made of its inputs. */
export interface JobPlan {
  readonly jobId: string
  readonly items: ReadonlyArray<PendingInput>
  readonly loaded: LoadedExecution
  readonly fromCache: boolean
  readonly result: StepAllOutput
}

/** A job of a tick, before planning. */
export interface JobToPlan {
  readonly jobId: string
  readonly items: ReadonlyArray<PendingInput>
  readonly loaded: LoadedExecution
  readonly fromCache: boolean
}

/** A job's plan, or why it has none: a failed counter read, or a defect of the core (that job's alone). */
export type PlanOutcome = { readonly job: JobToPlan; readonly plan: Exit.Exit<JobPlan, ExecutionError> }

/** The core call of a job: every input of the tick applied to one working copy. */
const coreCall = (deps: ExecutionDeps, job: JobToPlan, now: number) => {
  const { state } = job.loaded
  // A state stored before the log (or while it was off) gets its execution id on this touch.
  const freshId = state.log === undefined && deps.executionLog.enabled() ? newExecutionId(job.jobId, state.startedAt) : undefined
  const inputs: ReadonlyArray<EngineInput> = job.items.map((item) => (typeof item.input === "function" ? item.input(state) : item.input))
  return (counters: Parameters<typeof stepAll>[4]) => stepAll(state, inputs, now, freshId, counters)
}

/** A job whose transitions name counters: read them (one read per evaluation), then plan. */
const withCounters = (deps: ExecutionDeps, job: JobToPlan, call: ReturnType<typeof coreCall>, first: StepAllOutput): Effect.Effect<PlanOutcome> => {
  let last = first
  const run = deps.counters.run(job.loaded.state.scope, job.jobId, (values) => (last = call(values)).output, first.output)
  return Effect.exit(run).pipe(Effect.map((read): PlanOutcome => ({ job, plan: Exit.map(read, () => ({ ...job, result: last })) })))
}

/**
 * Plans every job of a tick in plain code; only the jobs whose transitions name counters need
 * an Effect (their reads run side by side). The core itself reads nothing.
 */
export const planJobs = (deps: ExecutionDeps, jobs: ReadonlyArray<JobToPlan>, now: number): Effect.Effect<ReadonlyArray<PlanOutcome>> => {
  const planned: Array<PlanOutcome> = []
  const reading: Array<Effect.Effect<PlanOutcome>> = []
  for (const job of jobs) {
    // A bug the core hits with one job's inputs is that job's: the other jobs of the tick go on.
    try {
      const call = coreCall(deps, job, now)
      const first = call([])
      if (first.output.needsCounters === undefined) planned.push({ job, plan: Exit.succeed({ ...job, result: first }) })
      else reading.push(withCounters(deps, job, call, first))
    } catch (defect) {
      planned.push({ job, plan: Exit.die(defect) })
    }
  }
  if (reading.length === 0) return Effect.succeed(planned)
  return Effect.map(Effect.all(reading, { concurrency: "unbounded" }), (read) => [...planned, ...read])
}
