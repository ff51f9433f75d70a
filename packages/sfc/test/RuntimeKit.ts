import { Effect, Either, Exit, Layer, Option, Scope } from "effect"
import { inject } from "vitest"
import { decodeJobOrderRecord, type JobOrder, normalizedName } from "@microdcs/job-state"
import { ChangeStream, type ChangeEntry, JobOrderDao, JobResponseDao, storeLayer, Valkey } from "@microdcs/store"
import {
  Executions,
  type ExecutionState,
  RECIPE_SCHEMA_ID,
  SfcRuntimeServices,
  validateRecipe
} from "@microdcs/sfc"
import { eventually } from "./RuntimeFixtures.js"

/** Shared pieces of the runtime integration tests (not a test file itself). */

export const SCOPE = "line-1"

export const stepJson = (Name: string, Initial = false) => ({ Name, Initial })
export const transition = (Source: string, Target: string, Condition = "true", Priority = 0) => ({ Source, Target, Condition, Priority })
export const push = (Name: string, Step: string, extra: Record<string, unknown> = {}) => ({
  Name, Step, Qualifier: "N", Interaction: "push_command", TypeId: `com.example.${Name}.v1`, TimeoutSeconds: 10, ...extra
})
export const pull = (Name: string, Step: string, extra: Record<string, unknown> = {}) => push(Name, Step, { Interaction: "pull_event", ...extra })

/** A linear recipe: the steps in order (the first initial), each transition `true`. */
export const linearRecipe = (steps: ReadonlyArray<string>, actions: ReadonlyArray<object>) => ({
  Steps: steps.map((name, i) => stepJson(name, i === 0)),
  Transitions: steps.slice(1).map((name, i) => transition(steps[i]!, name)),
  Actions: actions
})

/** A work master carrying `recipe`; a test with a broken recipe throws at once instead of timing out. */
export const recipeWorkMaster = (id: string, recipe: object): Record<string, unknown> => {
  const checked = validateRecipe(recipe)
  if (Either.isLeft(checked)) throw new Error(`invalid test recipe: ${checked.left.map((p) => p.message).join("; ")}`)
  return { ID: id, Description: `test recipe ${id}`, dataschema: RECIPE_SCHEMA_ID, data: recipe }
}

export const jobOrderFor = (id: string, workMasterId: string): JobOrder => ({ JobOrderID: id, Priority: 1, WorkMasterID: [{ ID: workMasterId }] })

/** The job order's normalized state name, or `undefined` when it does not exist. */
export const jobOrderState = (id: string) =>
  Effect.flatMap(JobOrderDao, (dao) => dao.get(id)).pipe(
    Effect.map((doc) => {
      const decoded = decodeJobOrderRecord(doc.doc)
      return Either.isRight(decoded) ? normalizedName(decoded.right.state) : "malformed"
    }),
    Effect.catchTag("NotFound", () => Effect.succeed(undefined))
  )

export const untilJobOrderIs = (id: string, state: string, timeoutMs?: number) =>
  eventually(jobOrderState(id).pipe(Effect.map((s) => (s === state ? s : undefined))), timeoutMs)

/** The stored job response of a job (`{jobId}-response`), or `undefined`. */
export const responseOf = (jobId: string) =>
  Effect.flatMap(JobResponseDao, (dao) => dao.get(`${jobId}-response`)).pipe(
    Effect.map((doc) => JSON.parse(doc.doc) as Record<string, unknown>),
    Effect.catchTag("NotFound", () => Effect.succeed(undefined))
  )

export const untilResponse = (jobId: string, timeoutMs?: number) => eventually(responseOf(jobId), timeoutMs)

/** The job's execution state and its store version, or `undefined`. */
export const executionOf = (jobId: string) =>
  Effect.flatMap(Executions, (e) => e.load(jobId)).pipe(Effect.map(Option.getOrUndefined))

/** Waits until the job's execution satisfies `check`, and returns it. */
export const untilExecution = (jobId: string, check: (state: ExecutionState) => boolean, timeoutMs?: number) =>
  eventually(executionOf(jobId).pipe(Effect.map((e) => (e !== undefined && check(e.state) ? e : undefined))), timeoutMs)

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
    const score = yield* valkey.command("zscore", (c) => c.zscore(key, jobId))
    return score === null ? null : Number(score)
  })

/** The store and the runtime services over the run's server, with no engine processes: for observing. */
export const observer = (prefix: string) => SfcRuntimeServices.pipe(Layer.provideMerge(storeLayer({ url: inject("valkeyUrl"), prefix })))

/**
 * Builds a layer in a scope of its own, so a test can run several engine instances side by side
 * and stop one of them mid-run. The returned `stop` closes it; the test's scope closes it too.
 */
export const startInstance = <ROut, E>(layer: Layer.Layer<ROut, E>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    yield* Layer.buildWithScope(layer, scope)
    return { stop: Scope.close(scope, Exit.void) }
  })
