import { Effect, Layer } from "effect"
import type { InterventionInput } from "@microdcs/sfc"
import { CommandDispatch } from "./CommandDispatch.js"
import type { EngineOptions } from "./EngineOptions.js"
import { ExecutionLogWriter } from "./ExecutionLogWriter.js"
import { Executions } from "./Executions.js"
import { intervene, writingExecutionLog } from "./Intervene.js"
import { RecipeSnapshots } from "./RecipeSnapshots.js"

/**
 * `Executions` with the log writer it writes through, one instance of each, for a process that
 * applies an operator's intervention without running the engine itself (the admin CLI, the
 * daemon's console): the same loop and CAS write as the engine's, over the store's services.
 */
export const StandaloneInterventions = Executions.DefaultWithoutDependencies.pipe(
  Layer.provideMerge(Layer.mergeAll(CommandDispatch.Default, RecipeSnapshots.Default, ExecutionLogWriter.Default))
)

type LogOptions = Pick<EngineOptions, "executionLog" | "executionLogCap" | "executionLogQueueSize" | "executionLogDetailBytes">

/**
 * `intervene` with services of its own (`StandaloneInterventions`) and the log writer installed for
 * its length, so the intervention's log node is written as `options` (the `SFC_EXECUTION_LOG*`
 * settings) say. One call, one set of services: concurrent calls never share a writer's install.
 */
export const interveneStandalone = (options: LogOptions, jobId: string, input: InterventionInput) =>
  intervene(jobId, input).pipe(writingExecutionLog(options), Effect.provide(StandaloneInterventions))
