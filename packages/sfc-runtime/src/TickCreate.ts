import { Effect, Exit, Result } from "effect"
import type { SfcCasManyError } from "@microdcs/store"
import { type EngineOutput, start, type StartParams } from "@microdcs/sfc"
import type { PendingInput } from "./ApplyInbox.js"
import type { Applied } from "./ApplyOutcome.js"
import { newExecutionId } from "./ExecutionLogIds.js"
import type { ExecutionDeps } from "./ExecutionStates.js"
import type { PlannedWrite, WrittenJob } from "./ExecutionWrite.js"
import type { TickAnswers } from "./TickAnswers.js"

/** A create of a tick with the output of `start`: written with version 0 (create-only). */
export interface CreatePlan {
  readonly item: PendingInput
  readonly output: EngineOutput
}

const planOne = (deps: ExecutionDeps, answers: TickAnswers, item: PendingInput, params: StartParams, now: number): Effect.Effect<CreatePlan | undefined> => {
  const executionId = params.executionId ?? (deps.executionLog.enabled() ? newExecutionId(params.jobId, now) : undefined)
  const call = (values: Parameters<typeof start>[2]) => start({ ...params, executionId }, now, values)
  let first: EngineOutput
  // A bug the core hits with one start is that start's: the rest of the tick goes on.
  try {
    first = call([])
  } catch (defect) {
    answers.answer(item, Exit.die(defect))
    return Effect.succeed(undefined)
  }
  // Only a start whose first transitions name counters needs an Effect.
  if (first.needsCounters === undefined) return Effect.succeed({ item, output: first })
  return Effect.matchEffect(deps.counters.run(params.scope, params.jobId, call, first), {
    onSuccess: (output) => Effect.succeed({ item, output }),
    onFailure: (error) => Effect.sync(() => void answers.answer(item, Exit.fail(error)))
  })
}

/** The outputs of a tick's creates (each alone in its tick for its job); one that cannot start is answered here. */
export const planCreates = (deps: ExecutionDeps, answers: TickAnswers, creates: ReadonlyArray<PendingInput>, now: number) =>
  Effect.map(
    Effect.forEach(creates, (item) => planOne(deps, answers, item, item.create!, now)),
    (plans) => plans.filter((plan): plan is CreatePlan => plan !== undefined)
  )

export const createWrite = (plan: CreatePlan): PlannedWrite => ({ expectedVersion: 0, output: plan.output, appliedEvents: [] })

/** Written, or a `Duplicate` when another start (or another instance) created the execution first. */
export const settleCreate = (answers: TickAnswers, plan: CreatePlan, result: Result.Result<WrittenJob, SfcCasManyError>): void => {
  if (Result.isSuccess(result)) {
    const { version, jobOrderSeen } = result.success
    return answers.answer(plan.item, Exit.succeed<Applied>({ _tag: "Written", output: plan.output, version, ...(jobOrderSeen !== undefined ? { jobOrderSeen } : {}) }))
  }
  const error = result.failure
  const duplicate = error._tag === "VersionConflict" || error._tag === "ScopeConflict" || error._tag === "DuplicateEvent"
  answers.answer(plan.item, duplicate ? Exit.succeed<Applied>({ _tag: "Duplicate" }) : Exit.fail(error))
}
