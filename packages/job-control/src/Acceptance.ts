import { Effect, Option } from "effect"
import { JobAcceptanceDao, ReferenceListDao, WorkMasterDao } from "@microdcs/store"
import { JobControlOptions } from "./JobControlOptions.js"
import type { JobOrderReferences } from "./References.js"

/** One reference list (or the work master list) with the ids a job order names that it lacks. */
export interface MissingReferences {
  readonly kind: string
  readonly ids: ReadonlyArray<string>
}

/** "unknown equipment: st-9; unknown workmaster: wm-x" */
export const describeMissing = (missing: ReadonlyArray<MissingReferences>): string =>
  missing.map(({ kind, ids }) => `unknown ${kind}: ${ids.join(", ")}`).join("; ")

/**
 * The acceptance checks of Store, StoreAndStart and Update. The limit itself is
 * counted inside the put script (so two concurrent stores cannot both pass it); here it is only
 * looked up. The references are read before the put; a list changed between the read and the
 * put is the same race as a configuration change a moment after acceptance, which the island allows.
 */
export const makeAcceptance = Effect.gen(function* () {
  const limits = yield* JobAcceptanceDao
  const references = yield* ReferenceListDao
  const workMasters = yield* WorkMasterDao
  const options = yield* JobControlOptions

  /** The scope's limit: `jobacceptance:{scope}` if set, else the configured default (0 = unlimited). */
  const limitOf = (scope: string) =>
    limits.get(scope).pipe(Effect.map(Option.getOrElse(() => options.defaultAcceptanceLimit)))

  const unknownIn = (scope: string, ids: ReadonlyArray<string>, concurrency: number | "unbounded") =>
    Effect.map(Effect.forEach(ids, (id) => workMasters.isMember(scope, id), { concurrency }), (known) => ids.filter((_, i) => !known[i]))

  const missingIn = (scope: string, referenced: JobOrderReferences, unknownWorkMasters: ReadonlyArray<string> | undefined) =>
    Effect.gen(function* () {
      // One SMISMEMBER per list kind and one SISMEMBER per work master. The lists are
      // independent, so several are asked at once; one or two go one after the other, since
      // forking fibers for them costs more CPU (about 60 µs) than the round trip they save.
      const concurrency = referenced.lists.length + referenced.workMasters.length > 2 ? "unbounded" : 1
      const lists = yield* Effect.forEach(
        referenced.lists,
        ({ kind, ids }) => Effect.map(references.missing(kind, scope, ids), (absent) => ({ kind, ids: absent })),
        { concurrency }
      )
      // Read with the dedupe claim already, when the request came through one.
      const absentWorkMasters = unknownWorkMasters ?? (yield* unknownIn(scope, referenced.workMasters, concurrency))
      const all: ReadonlyArray<MissingReferences> = [...lists, { kind: "workmaster", ids: absentWorkMasters }]
      return all.filter((m) => m.ids.length > 0)
    })

  /**
   * Every referenced id that is not in its scope list, grouped by list; empty when all are
   * known. `unknownWorkMasters`: which of `referenced.workMasters` the claim found unlisted.
   */
  const missingReferences = (scope: string, referenced: JobOrderReferences, unknownWorkMasters?: ReadonlyArray<string>) =>
    // A job order that names no reference asks nothing (no fiber, no forEach).
    referenced.lists.length === 0 && (referenced.workMasters.length === 0 || unknownWorkMasters?.length === 0)
      ? Effect.succeed<ReadonlyArray<MissingReferences>>([])
      : missingIn(scope, referenced, unknownWorkMasters)

  return { limitOf, missingReferences } as const
})
