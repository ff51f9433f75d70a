import { Effect, Result } from "effect"
import { validateWorkMasterRecipe } from "@microdcs/sfc"
import { ReturnStatus } from "@microdcs/job-state"
import { JobAcceptanceDao, ReferenceListDao, StateMoved, Valkey, type ValkeyService, WorkMasterDao } from "@microdcs/store"
import { type Answer, refused, succeeded } from "./Answer.js"
import type { ConfigCommand } from "./ConfigCommand.js"
import { JobControlOptions, type JobControlSettings } from "./JobControlOptions.js"
import { pinProblem, workMasterDigest } from "./RecipeDigests.js"
import { cycleProblems, cycleRefusal } from "./SubRecipeCycles.js"

/** The digest of the recipe a work master carries, or null (none, or invalid). */
const digestOrNull = (document: unknown): string | null => {
  const digest = workMasterDigest(document)
  return digest._tag === "Recipe" ? digest.digest : null
}

type Of<T extends ConfigCommand["_tag"]> = Extract<ConfigCommand, { readonly _tag: T }>

/** What the station configuration writes through. */
interface ConfigDeps {
  readonly valkey: ValkeyService
  readonly references: ReferenceListDao["Service"]
  readonly workMasters: WorkMasterDao["Service"]
  readonly limits: JobAcceptanceDao["Service"]
  readonly options: JobControlSettings
}

const referenceConfig = ({ references }: ConfigDeps, command: Of<"ReferenceConfig">) =>
  command.action === "PUT"
    ? Effect.map(references.add(command.kind, command.scope, command.ids), (added) => succeeded({ Added: added }))
    : Effect.map(references.remove(command.kind, command.scope, command.ids), (removed) => succeeded({ Removed: removed }))

/**
 * Upsert of the whole document; the recipe (if any) was validated when the request was parsed.
 * One whose recipe reaches itself through sub-recipes (over the stored work masters) is refused,
 * every cycle listed. A work master pinned in `recipeDigests` whose recipe has another digest is refused, unstored.
 */
const workMasterPut = ({ options, workMasters }: ConfigDeps, command: Of<"WorkMasterPut">) => {
  const pinned = pinProblem(options.recipeDigests, command.id, command.document)
  if (pinned !== undefined) {
    return Effect.succeed(
      refused(ReturnStatus.INVALID_REQUEST, "RecipeDigestMismatch", pinned, {
        ID: command.id,
        PinnedDigest: options.recipeDigests.get(command.id),
        RecipeDigest: digestOrNull(command.document)
      })
    )
  }
  return Effect.gen(function* () {
    const recipe = validateWorkMasterRecipe(command.document)
    const cycles = recipe !== undefined && Result.isSuccess(recipe) ? yield* cycleProblems(workMasters, command.id, recipe.success) : []
    return cycles.length > 0 ? cycleRefusal(command.id, cycles) : yield* storeWorkMaster(workMasters, command)
  })
}

/** The upsert itself, once every check passed. */
const storeWorkMaster = (workMasters: ConfigDeps["workMasters"], command: Of<"WorkMasterPut">) =>
  workMasters
    .put({ id: command.id, scope: command.scope, doc: JSON.stringify(command.document), expectedVersion: -1 })
    .pipe(
      Effect.map(({ version }): Answer => succeeded({ ID: command.id, Version: version })),
      // An unconditional put (-1) never conflicts; the DAO's signature just covers every mode.
      Effect.catchTag("VersionConflict", (e) => Effect.die(e)),
      Effect.catchTag("ScopeConflict", (e) =>
        Effect.succeed(
          refused(ReturnStatus.INVALID_REQUEST, "ScopeConflict", `work master ${command.id} belongs to scope ${e.storedScope}`, { ID: command.id })
        )
      )
    )

/**
 * Removes the work master of this scope. One of another scope is not ours to delete, so it
 * counts as absent; the delete carries the version read, so a concurrent put is not lost.
 */
const workMasterDelete = ({ valkey, workMasters, options }: ConfigDeps, command: Of<"WorkMasterDelete">) =>
  Effect.gen(function* () {
    const absent = succeeded({ ID: command.id, Removed: 0 })
    for (let n = 0; n < options.maxAttempts; n++) {
      const stored = yield* workMasters.get(command.id).pipe(Effect.catchTag("NotFound", () => Effect.succeed(undefined)))
      if (stored === undefined || stored.scope !== command.scope) return absent
      const removed = yield* workMasters.delete({ id: command.id, expectedVersion: stored.version }).pipe(
        Effect.as(true as boolean | undefined),
        Effect.catchTags({ NotFound: () => Effect.succeed(false), VersionConflict: () => Effect.succeed(undefined) })
      )
      if (removed !== undefined) return removed ? succeeded({ ID: command.id, Removed: 1 }) : absent
    }
    const key = yield* Effect.orDie(valkey.key("workMaster", { id: command.id }))
    return yield* new StateMoved({ key, attempts: options.maxAttempts })
  })

const apply = (deps: ConfigDeps, command: ConfigCommand) => {
  switch (command._tag) {
    case "ReferenceConfig":
      return referenceConfig(deps, command)
    case "WorkMasterPut":
      return workMasterPut(deps, command)
    case "WorkMasterDelete":
      return workMasterDelete(deps, command)
    case "AcceptancePut":
      return Effect.as(deps.limits.set(command.scope, command.limit), succeeded({ Limit: command.limit }))
    case "AcceptanceDelete":
      return Effect.map(deps.limits.clear(command.scope), (cleared) => succeeded({ Removed: cleared ? 1 : 0 }))
  }
}

/**
 * Station configuration: the scope's reference lists, work masters and acceptance
 * limit. PUT and DELETE are idempotent, so a redelivered event changes nothing the second time;
 * the reply says how much the event changed (`Added`, `Removed`).
 */
export const makeStationConfig = Effect.gen(function* () {
  const deps: ConfigDeps = {
    valkey: yield* Valkey,
    references: yield* ReferenceListDao,
    workMasters: yield* WorkMasterDao,
    limits: yield* JobAcceptanceDao,
    options: yield* JobControlOptions
  }
  return { apply: (command: ConfigCommand) => apply(deps, command) } as const
})
