import { Effect, Result, Layer, Option } from "effect"
import type { JobOrder } from "@microdcs/job-state"
import { ChangeStream, type ChangeEntry, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { eventually, type UntilDeadline } from "@microdcs/test-utils"
import { testStore } from "@microdcs/testkit"
import { Executions, SfcRuntimeServices } from "@microdcs/sfc-runtime"
import { type ExecutionState, RECIPE_SCHEMA_ID, RECIPE_SCHEMA_ID_V1_1, validateRecipe } from "@microdcs/sfc"
import { recipeBuilders } from "@microdcs/sfc/testing"

/** Shared pieces of the runtime integration tests (not a test file itself). */

// Shared with the other packages' tests: waits for job states and responses, instances in their own scope.
export { startInstance } from "@microdcs/test-utils"
export { jobOrderState, responseOf, responseSummary, storedResponseOf, untilJobOrderIs, untilResponse } from "@microdcs/testkit"

export const SCOPE = "line-1"

const builders = recipeBuilders(".v1")
export const { stepJson, transition, push, pull } = builders

/** A linear recipe: the steps in order (the first initial), each transition `true`. */
export const linearRecipe = (steps: ReadonlyArray<string>, actions: ReadonlyArray<object>) => builders.linearJson(steps, actions)

/** A work master carrying `recipe`; a test with a broken recipe throws at once instead of timing out. */
export const recipeWorkMaster = (id: string, recipe: object): Record<string, unknown> => {
  const checked = validateRecipe(recipe)
  if (Result.isFailure(checked)) throw new Error(`invalid test recipe: ${checked.failure.map((p) => p.message).join("; ")}`)
  return { ID: id, Description: `test recipe ${id}`, dataschema: RECIPE_SCHEMA_ID, data: recipe }
}

/** A work master carrying a recipe of schema v1.1.0 (waiting transitions, time limits, step times). */
export const recipeWorkMasterV11 = (id: string, recipe: object): Record<string, unknown> => {
  const checked = validateRecipe(recipe, "1.1.0")
  if (Result.isFailure(checked)) throw new Error(`invalid test recipe: ${checked.failure.map((p) => p.message).join("; ")}`)
  return { ID: id, Description: `test recipe ${id}`, dataschema: RECIPE_SCHEMA_ID_V1_1, data: recipe }
}

export const jobOrderFor = (id: string, workMasterId: string): JobOrder => ({ JobOrderID: id, Priority: 1, WorkMasterID: [{ ID: workMasterId }] })

/** The job's execution state and its store version, or `undefined`. */
export const executionOf = (jobId: string) =>
  Effect.flatMap(Executions, (e) => e.load(jobId)).pipe(Effect.map(Option.getOrUndefined))

/** Waits until the job's execution satisfies `check`, and returns it. */
export const untilExecution = (jobId: string, check: (state: ExecutionState) => boolean, deadline?: UntilDeadline) =>
  eventually(executionOf(jobId).pipe(Effect.map((e) => (e !== undefined && check(e.state) ? e : undefined))), deadline)

/** Every entry of the scope's change stream, oldest first. */
export const changeEntries = (scope: string) =>
  Effect.gen(function* () {
    const changes = yield* ChangeStream
    const all: Array<ChangeEntry> = []
    for (let after = "0"; ; ) {
      const page = yield* changes.read(scope, { after, count: 1000 })
      all.push(...page.entries)
      if (page.entries.length < 1000) return all
      after = page.next
    }
  })

/** How many change entries name `id` with `change`. */
export const countChanges = (entries: ReadonlyArray<ChangeEntry>, id: string, change: string) =>
  entries.filter((e) => e.id === id && e.change === change).length

/** The due-index score of a job, or null. */
export const dueScore = (scope: string, jobId: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("sfcDue", { scope })
    const score = yield* unsafeCommand(valkey, "zscore", (c) => c.zscore(key, jobId))
    return score === null ? null : Number(score)
  })

/** The store and the runtime services over the run's server, with no engine processes: for observing. */
export const observer = (prefix: string) => SfcRuntimeServices.pipe(Layer.provideMerge(testStore({ prefix })))
