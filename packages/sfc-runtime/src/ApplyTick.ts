import { Clock, Effect, Exit, Result } from "effect"
import type { SfcCasManyError, SfcWritten } from "@microdcs/store"
import type { PendingInput } from "./ApplyInbox.js"
import type { Applied, ExecutionError } from "./ApplyOutcome.js"
import type { ExecutionDeps } from "./ExecutionStates.js"
import { type PlannedWrite, writeMany } from "./ExecutionWrite.js"
import { answerAll, type TickAnswers } from "./TickAnswers.js"
import { type CreatePlan, createWrite, planCreates, settleCreate } from "./TickCreate.js"
import { type JobLoad, loadJobs } from "./TickLoad.js"
import { type JobPlan, type JobToPlan, planJobs } from "./TickPlan.js"

const failAll = (answers: TickAnswers, items: ReadonlyArray<PendingInput>, error: ExecutionError) =>
  items.forEach((item) => answers.answer(item, Exit.fail(error)))

/** A job's write landed, or failed for this job alone: answer its inputs or give them back. */
const settleWrite = (deps: ExecutionDeps, answers: TickAnswers, plan: JobPlan, result: Result.Result<SfcWritten, SfcCasManyError>) => {
  if (Result.isSuccess(result)) return answerAll(answers, plan.items, plan.result, result.success.version)
  const error = result.failure
  switch (error._tag) {
    // Another instance moved the job: read again and recompute, in the next tick.
    case "VersionConflict":
      deps.cache.delete(plan.jobId)
      return answers.retry(plan.items, true)
    case "DuplicateEvent": {
      // That event's input is a duplicate; the job's other inputs go again without it.
      const duplicate = eventCarriers(plan)[error.eventIndex ?? 0]
      if (duplicate) answers.answer(duplicate, Exit.succeed<Applied>({ _tag: "Duplicate", jobId: error.jobId }))
      return answers.retry(plan.items.filter((item) => item !== duplicate), false)
    }
    case "ScopeConflict":
      return plan.items.forEach((item) => answers.answer(item, Exit.die(error)))
    default:
      return failAll(answers, plan.items, error)
  }
}

/** The jobs whose inputs changed something go to the write; the others are answered here. */
const toWrites = (answers: TickAnswers, plans: ReadonlyArray<JobPlan>): Array<JobPlan> => {
  const writing: Array<JobPlan> = []
  for (const plan of plans) {
    if (plan.result.output.changed) writing.push(plan)
    // A cached state may be behind another instance's write: "nothing to do" is only believed from a fresh read.
    else if (plan.fromCache) answers.retry(plan.items, true)
    else answerAll(answers, plan.items, plan.result, undefined)
  }
  return writing
}

/**
 * The inputs whose events the write records: those that changed the state. An event that changed
 * nothing is not this job's (routing by type then tries the next waiting job), as before a write.
 */
const eventCarriers = (plan: JobPlan): ReadonlyArray<PendingInput> =>
  plan.items.filter((item, at) => item.appliedEvent !== undefined && plan.result.perInput[at]!.changed)

const plannedWrite = (plan: JobPlan): PlannedWrite => ({
  expectedVersion: plan.loaded.version,
  output: plan.result.output,
  appliedEvents: eventCarriers(plan).map((item) => item.appliedEvent!)
})

/** A tick's jobs after loading: the creates, the jobs to plan; the others are answered here. */
const sortLoaded = (answers: TickAnswers, groups: ReadonlyMap<string, ReadonlyArray<PendingInput>>, loads: ReadonlyMap<string, JobLoad>) => {
  const creates: Array<PendingInput> = []
  const toPlan: Array<JobToPlan> = []
  for (const [jobId, items] of groups) {
    const load = loads.get(jobId)!
    const creating = items[0]!.create !== undefined
    if (load._tag === "Failed") failAll(answers, items, load.error)
    else if (creating && load._tag === "Loaded") answers.answer(items[0]!, Exit.succeed<Applied>({ _tag: "Duplicate" }))
    else if (creating) creates.push(items[0]!)
    else if (load._tag === "Missing") items.forEach((item) => answers.answer(item, Exit.succeed<Applied>({ _tag: "NoExecution" })))
    else toPlan.push({ jobId, items, loaded: load.loaded, fromCache: load.fromCache })
  }
  return { creates, toPlan }
}

/** Every write of the tick (the steps' and the creates') in one batched CAS, each settled on its own. */
const writeAll = (deps: ExecutionDeps, answers: TickAnswers, writing: ReadonlyArray<JobPlan>, creating: ReadonlyArray<CreatePlan>) => {
  if (writing.length + creating.length === 0) return Effect.void
  const writes = [...writing.map(plannedWrite), ...creating.map(createWrite)]
  return Effect.map(Effect.result(writeMany(deps, writes, answers.written)), (results) => {
    if (Result.isFailure(results)) {
      writing.forEach((plan) => failAll(answers, plan.items, results.failure))
      return creating.forEach((plan) => answers.answer(plan.item, Exit.fail(results.failure)))
    }
    writing.forEach((plan, i) => settleWrite(deps, answers, plan, results.success[i]!))
    creating.forEach((plan, i) => settleCreate(answers, plan, results.success[writing.length + i]!))
  })
}

/** Load, plan, write and answer: what one tick does with the inputs it took. */
const runTickBody = (deps: ExecutionDeps, answers: TickAnswers, groups: ReadonlyMap<string, ReadonlyArray<PendingInput>>) =>
  Effect.gen(function* () {
    const { creates, toPlan } = sortLoaded(answers, groups, yield* loadJobs(deps, groups))
    const now = yield* Clock.currentTimeMillis
    const plans: Array<JobPlan> = []
    for (const { job, plan } of yield* planJobs(deps, toPlan, now)) {
      if (Exit.isSuccess(plan)) plans.push(plan.value)
      else job.items.forEach((item) => answers.answer(item, Exit.failCause(plan.cause)))
    }
    const creating = creates.length === 0 ? [] : yield* planCreates(deps, answers, creates, now)
    yield* writeAll(deps, answers, toWrites(answers, plans), creating)
  })

/**
 * One tick over the inputs it took (grouped by job, a job in no other tick): its states in one
 * read, the pure core over every job, one batched CAS, the sends, and an answer or a retry for
 * every input. Uninterruptible: a tick once started finishes (each wait in it is bounded), so
 * no input is left without its answer; a defect answers what is still open with it.
 */
export const runTick = (deps: ExecutionDeps, answers: TickAnswers, groups: ReadonlyMap<string, ReadonlyArray<PendingInput>>): Effect.Effect<void> =>
  Effect.uninterruptible(
    runTickBody(deps, answers, groups).pipe(
      Effect.catchCause((cause) => Effect.sync(() => groups.forEach((items) => items.forEach((item) => answers.answer(item, Exit.failCause(cause))))))
    )
  )
