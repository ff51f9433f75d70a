import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Result, Option } from "effect"
import { SfcRecipes, SfcStateDao, WorkMasterDao } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { correlationIdOf, type Recipe, validateRecipe } from "@microdcs/sfc"
import { Executions, RecipeSnapshots, SfcEvents } from "@microdcs/sfc-runtime"
import { engineWorld, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import {
  executionOf,
  jobOrderFor,
  linearRecipe,
  observer,
  pull,
  push,
  recipeWorkMaster,
  SCOPE,
  startInstance,
  untilExecution,
  responseSummary,
  untilResponse
} from "./RuntimeKit.js"

/** The hot path's memory: execution states cached with their version, recipes stored once by digest. */

const recipeOf = (json: object): Recipe => Result.getOrThrow(validateRecipe(json))
const twoPushes = recipeOf(linearRecipe(["Fit", "Tighten"], [push("fit", "Fit"), push("tighten", "Tighten")]))
const reply = (jobId: string, action: string) =>
  ({ type: "event", correlationId: correlationIdOf(jobId, action, 1), data: { done: action } }) as const

/** The stored document of a job's state, parsed as it is (no recipe filled in). */
const rawState = (jobId: string) =>
  Effect.flatMap(SfcStateDao, (states) => states.get(jobId)).pipe(Effect.map((doc) => JSON.parse(doc.doc) as Record<string, unknown>))

describe("SFC runtime: the hot path's caches", () => {
  it.live("a cached state that another instance moved meanwhile is detected by its version and recomputed", () => {
    const prefix = randomPrefix("sfc-cache")
    return Effect.gen(function* () {
      // Two instances of the runtime services: each with its own in-memory state cache.
      const a = Context.get((yield* startInstance(observer(prefix))).context, Executions)
      const b = Context.get((yield* startInstance(observer(prefix))).context, Executions)
      const params = (jobId: string) => ({ jobId, scope: SCOPE, workMasterId: "wm-cache", recipe: twoPushes })

      // A changing input: A's CAS on its cached version 1 conflicts, A re-reads version 2 and recomputes.
      expect((yield* a.create(params("jo-cache-1")))._tag).toBe("Written")
      expect(yield* b.apply("jo-cache-1", reply("jo-cache-1", "fit"))).toMatchObject({ _tag: "Written", version: 2 })
      const paused = yield* a.apply("jo-cache-1", { type: "pause" })
      expect(paused).toMatchObject({ _tag: "Written", version: 3 })
      const afterPause = (yield* executionOf("jo-cache-1"))!
      expect(afterPause.version).toBe(3)
      expect(afterPause.state.status).toBe("paused")
      expect(afterPause.state.active.map((s) => s.step)).toEqual(["Tighten"])
      expect(afterPause.state.results).toEqual({ fit: { done: "fit" } })

      // An input the cached state cannot take (its action is not open there) is not believed:
      // A re-reads, finds the action B opened, and applies it.
      expect((yield* a.create(params("jo-cache-2")))._tag).toBe("Written")
      expect((yield* b.apply("jo-cache-2", reply("jo-cache-2", "fit")))._tag).toBe("Written")
      expect(yield* a.apply("jo-cache-2", reply("jo-cache-2", "tighten"))).toMatchObject({ _tag: "Written", version: 3 })
      expect((yield* executionOf("jo-cache-2"))?.state.status).toBe("completed")
    }).pipe(Effect.provide(observer(prefix)), Effect.scoped)
  })

  it.live("a recipe stored by digest is shared by the jobs that run it and survives a work master change mid-run", () => {
    const GO = "com.example.go.v1"
    const gated = (work: string) => linearRecipe(["Gate", "Work"], [pull("go", "Gate", { TypeId: GO }), push(work, "Work")])
    const prefix = randomPrefix("sfc-digest")
    const world = engineWorld({ onCommand: (c) => ({ data: { ran: c.action } }) }, { prefix })
    const waitingForGo = (jobId: string) => untilExecution(jobId, (s) => s.actions.some((a) => a.action === "go" && a.state === "waiting"))
    const go = (jobId: string) =>
      Effect.flatMap(SfcEvents, (events) => events.ingest({ scope: SCOPE, source: "urn:test", id: `go-${jobId}`, type: GO, jobId, data: {} }))
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-digest", gated("old-work")))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-digest-1", "wm-digest"))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-digest-2", "wm-digest"))
      yield* waitingForGo("jo-digest-1")
      yield* waitingForGo("jo-digest-2")

      // Both states name one digest and carry no copy; the digest's key holds the recipe.
      const first = yield* rawState("jo-digest-1")
      const second = yield* rawState("jo-digest-2")
      expect(first["recipe"]).toBeUndefined()
      expect(typeof first["recipeDigest"]).toBe("string")
      expect(second["recipeDigest"]).toBe(first["recipeDigest"])
      const digest = first["recipeDigest"] as string
      const stored = yield* Effect.flatMap(SfcRecipes, (recipes) => recipes.get(digest))
      expect(Option.map(stored, (text) => (JSON.parse(text) as Recipe).Actions.map((a) => a.Name))).toEqual(Option.some(["go", "old-work"]))

      // The work master changes, then goes away, mid-run: the running jobs keep their recipe.
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-digest", gated("new-work")))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-digest-3", "wm-digest"))
      yield* waitingForGo("jo-digest-3")
      const third = yield* rawState("jo-digest-3")
      expect(third["recipeDigest"]).not.toBe(digest)
      yield* Effect.flatMap(WorkMasterDao, (dao) => dao.delete({ id: "wm-digest" }))
      yield* Effect.forEach(["jo-digest-1", "jo-digest-2", "jo-digest-3"], go, { discard: true })
      expect(responseSummary(yield* untilResponse("jo-digest-1"))).toMatchObject({ state: "Ended_Completed", data: { "old-work": { ran: "old-work" } } })
      expect(responseSummary(yield* untilResponse("jo-digest-2"))).toMatchObject({ state: "Ended_Completed", data: { "old-work": { ran: "old-work" } } })
      expect(responseSummary(yield* untilResponse("jo-digest-3"))).toMatchObject({ state: "Ended_Completed", data: { "new-work": { ran: "new-work" } } })
      // A fresh process (no recipe in memory) reads the recipe back by its digest.
      const fresh = yield* startInstance(observer(prefix))
      const reread = yield* Context.get(fresh.context, RecipeSnapshots).recipeOf(digest)
      expect(reread.Actions.map((a) => a.Name)).toEqual(["go", "old-work"])
    }).pipe(Effect.provide(world.layer), Effect.scoped)
  })

  it.live("a state written before recipes were stored by digest still carries its recipe, and runs on", () => {
    const prefix = randomPrefix("sfc-old-layout")
    return Effect.gen(function* () {
      const executions = yield* Executions
      // No digest: the state is written the old way, with the recipe inside.
      expect((yield* executions.create({ jobId: "jo-old", scope: SCOPE, workMasterId: "wm-old", recipe: twoPushes }))._tag).toBe("Written")
      expect((yield* rawState("jo-old"))["recipe"]).toEqual(twoPushes)
      // Another process (nothing cached) reads it and moves it.
      const other = Context.get((yield* startInstance(observer(prefix))).context, Executions)
      expect((yield* other.apply("jo-old", reply("jo-old", "fit")))._tag).toBe("Written")
      expect((yield* other.apply("jo-old", reply("jo-old", "tighten")))._tag).toBe("Written")
      const done = (yield* executionOf("jo-old"))!
      expect(done.state.status).toBe("completed")
      expect(done.state.recipe).toEqual(twoPushes)
    }).pipe(Effect.provide(observer(prefix)), Effect.scoped)
  })
})
