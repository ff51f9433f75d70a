import { Data, Effect } from "effect"
import { type EngineOutput, type InterventionInput, InterventionRefused, interventionRefusal } from "@microdcs/sfc"
import type { ExecutionError } from "./ApplyOutcome.js"
import type { EngineOptions } from "./EngineOptions.js"
import { ExecutionLogWriter } from "./ExecutionLogWriter.js"
import { Executions } from "./Executions.js"

/** The job has no execution: it never started (no recipe, not yet run) or its state was removed. */
export class ExecutionNotFound extends Data.TaggedError("ExecutionNotFound")<{ readonly jobId: string; readonly message: string }> {}

/** An intervention the engine applied: its output and the state's new version. */
export interface Intervened {
  readonly output: EngineOutput
  readonly version: number
}

/**
 * Applies an operator's intervention (skip a step, force a transition, set a result, retry an
 * action) through the engine's loop, like every other input of the job: one CAS write with its
 * outbox and log. An intervention the engine did not apply fails with `InterventionRefused`, every
 * problem listed and judged on the state the engine saw; nothing was written then.
 */
export const intervene = (jobId: string, input: InterventionInput): Effect.Effect<Intervened, InterventionRefused | ExecutionNotFound | ExecutionError, Executions> =>
  Effect.gen(function* () {
    const applied = yield* (yield* Executions).apply(jobId, input)
    switch (applied._tag) {
      case "Written":
        return { output: applied.output, version: applied.version }
      case "NoExecution":
        return yield* new ExecutionNotFound({ jobId, message: `job ${jobId} has no execution (not started by the engine, or removed)` })
      case "Unchanged": {
        const refused = interventionRefusal(applied.output.state, input)
        if (refused !== undefined) return yield* refused
        const message = `${input.type} refused: ${applied.output.note ?? "it changed nothing"}`
        return yield* new InterventionRefused({ intervention: input.type, problems: [{ kind: "state", message }], message })
      }
      case "Duplicate":
        // Only an input recorded with an applied event can be a duplicate; an intervention has none.
        return yield* Effect.die(new Error(`${input.type} of job ${jobId} was taken for a duplicate event`))
    }
  })

type LogOptions = Pick<EngineOptions, "executionLog" | "executionLogCap" | "executionLogQueueSize" | "executionLogDetailBytes">

/**
 * Runs `body` with this process's execution log writer installed for its length, when the log is
 * on (`options.executionLog`) and no engine installed it here: a process that applies inputs
 * without running the engine (the admin CLI) would otherwise drop the log writes of its inputs.
 * What is queued is written when the body ends. Give it the writer `Executions` writes through.
 */
export const writingExecutionLog =
  (options: LogOptions) =>
  <A, E, R>(body: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | ExecutionLogWriter> =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = yield* ExecutionLogWriter
        if (options.executionLog && !log.enabled()) {
          yield* log.install({ queueSize: options.executionLogQueueSize, cap: options.executionLogCap, detailBytes: options.executionLogDetailBytes })
        }
        return yield* body
      })
    )
