import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { COUNTER_RECHECK_MS, type SubRecipeEntry, subRecipeJobId, validateRecipe } from "@microdcs/sfc"
import { Executions, startJob } from "@microdcs/sfc-runtime"
import { SfcStateDao } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { endSubRecipe, followParent, startSubRecipe } from "../src/SubRecipeEntries.js"
import { putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import { dueScore, executionOf, jobOrderFor, linearRecipe, observer, pull, push, recipeWorkMasterV11, SCOPE } from "./RuntimeKit.js"

/**
 * A tree of sub-recipes driven entry by entry (no engine processes), so the entries can be handled
 * in the order a race would: removal of the whole tree, and children whose parent moved on first.
 */

const OPTIONS = { maxAttempts: 3, counterRecheckMs: COUNTER_RECHECK_MS }
const SCAN = "com.example.scan.v1"
const LOT = "com.example.lot.v1"
const recipe = (id: string, steps: ReadonlyArray<string>, actions: ReadonlyArray<object>) => recipeWorkMasterV11(id, linearRecipe(steps, actions))
const sub = (name: string, step: string, workMasterId: string, parameters: Record<string, unknown> = {}) =>
  push(name, step, { Interaction: "recipe", WorkMasterID: workMasterId, Parameters: parameters, TimeoutSeconds: 600 })

/** top → mid → leaf; the leaf waits for a scan (a wait) and for its lot's event (a keyed wait), both with a deadline. */
const putTree = Effect.gen(function* () {
  yield* putWorkMaster(SCOPE, recipe("wm-leaf", ["Wait"], [
    pull("scan", "Wait", { TypeId: SCAN, TimeoutSeconds: 600 }),
    pull("lot", "Wait", { TypeId: LOT, TimeoutSeconds: 600, CorrelationKey: { Attribute: "lotid" }, Matches: "order.Parameters.lot" })
  ]))
  yield* putWorkMaster(SCOPE, recipe("wm-mid", ["Run"], [sub("leaf", "Run", "wm-leaf", { lot: "lot-7" })]))
  yield* putWorkMaster(SCOPE, recipe("wm-top", ["Dose"], [sub("dose", "Dose", "wm-mid")]))
})

/** The `subrecipe` entry the parent's open run of `action` wrote (as the engine builds it). */
const childEntry = (jobId: string, action: string) =>
  Effect.gen(function* () {
    const parent = (yield* executionOf(jobId))!.state
    const run = parent.actions.find((a) => a.action === action && a.state === "dispatched")!
    const spec = parent.recipe.Actions.find((a) => a.Name === action)!
    const entry: SubRecipeEntry = {
      type: "subrecipe", jobId, action, childJobId: subRecipeJobId(jobId, action, run.visit), correlationId: run.correlationId!,
      rootJobId: parent.parent?.rootJobId ?? jobId, workMasterId: spec.WorkMasterID!, parameters: (spec.Parameters ?? {}) as Record<string, unknown>
    }
    return entry
  })

/** Starts the root job and handles the `subrecipe` entries down the tree; the job ids, root first. */
const startTree = (root: string) =>
  Effect.gen(function* () {
    yield* putJobOrder(SCOPE, jobOrderFor(root, "wm-top"))
    expect(yield* startJob(root, OPTIONS)).toBe("started")
    const dose = yield* childEntry(root, "dose")
    yield* startSubRecipe(dose, OPTIONS)
    const leaf = yield* childEntry(dose.childJobId, "leaf")
    yield* startSubRecipe(leaf, OPTIONS)
    return [root, dose.childJobId, leaf.childJobId] as const
  })

/** Every index entry that names one of `jobIds`. */
const indexEntriesOf = (jobIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const states = yield* SfcStateDao
    const lotWait = { typeId: LOT, key: { place: "attribute.lotid", value: "lot-7" } }
    const named = [
      ...(yield* states.listActive(SCOPE)),
      ...(yield* states.waiting(SCOPE, SCAN)).map((j) => j.jobId),
      ...(yield* states.keyedWaiting(SCOPE, lotWait, 10)).map((j) => j.jobId)
    ].filter((id) => jobIds.includes(id))
    for (const jobId of jobIds) if ((yield* dueScore(SCOPE, jobId)) !== null) named.push(`due:${jobId}`)
    return named
  })

const leafRecipe = () => {
  const checked = validateRecipe(linearRecipe(["Wait"], [pull("scan", "Wait", { TypeId: SCAN, TimeoutSeconds: 600 })]), "1.1.0")
  return Result.getOrThrow(checked)
}

describe("SFC runtime: a tree of sub-recipes", () => {
  it.live("Clear or Cancel of the root removes its children and grandchildren with every index entry", () =>
    Effect.gen(function* () {
      yield* putTree
      const tree = yield* startTree("jo-tree")
      const [, mid, leaf] = tree
      expect((yield* executionOf("jo-tree"))?.state.children).toEqual([mid])
      expect((yield* executionOf(mid))?.state.children).toEqual([leaf])
      expect((yield* indexEntriesOf(tree)).toSorted()).toEqual([...tree, leaf, leaf, `due:${leaf}`, `due:${mid}`, "due:jo-tree"].toSorted())

      // Job control's remove (what the MES's Clear and Cancel reach).
      expect(yield* (yield* Executions).remove("jo-tree")).toBe(true)
      for (const jobId of tree) expect(yield* executionOf(jobId)).toBeUndefined()
      expect(yield* indexEntriesOf(tree)).toEqual([])
    }).pipe(Effect.provide(observer(randomPrefix("sfc-tree-remove")))))

  it.live("a child whose parent was removed is never created, or removes itself when the removal came between check and create", () =>
    Effect.gen(function* () {
      yield* putTree
      yield* putJobOrder(SCOPE, jobOrderFor("jo-gone", "wm-top"))
      yield* startJob("jo-gone", OPTIONS)
      const entry = yield* childEntry("jo-gone", "dose")
      const executions = yield* Executions
      yield* executions.remove("jo-gone")
      yield* startSubRecipe(entry, OPTIONS)
      expect(yield* executionOf(entry.childJobId)).toBeUndefined()

      // The start's check passed, then the parent was removed, then the child was created.
      yield* executions.create({ jobId: entry.childJobId, scope: SCOPE, workMasterId: "wm-leaf", recipe: leafRecipe(), parent: { jobId: "jo-gone", correlationId: entry.correlationId, action: "dose", rootJobId: "jo-gone" } })
      yield* followParent(entry.childJobId)
      expect(yield* executionOf(entry.childJobId)).toBeUndefined()
      expect(yield* indexEntriesOf([entry.childJobId])).toEqual([])
    }).pipe(Effect.provide(observer(randomPrefix("sfc-tree-gone")))))

  it.live("the parent aborted before its child's start was handled: the child is never created, or aborted at once", () =>
    Effect.gen(function* () {
      yield* putTree
      yield* putJobOrder(SCOPE, jobOrderFor("jo-race", "wm-top"))
      yield* startJob("jo-race", OPTIONS)
      const entry = yield* childEntry("jo-race", "dose")
      const executions = yield* Executions
      yield* executions.apply("jo-race", { type: "abort" })
      // The racy order: the parent's `subrecipe-end` before its `subrecipe`.
      yield* endSubRecipe({ type: "subrecipe-end", jobId: "jo-race", childJobId: entry.childJobId, how: "abort", reason: "the parent job aborted" })
      yield* startSubRecipe(entry, OPTIONS)
      expect(yield* executionOf(entry.childJobId)).toBeUndefined()

      // The start's check passed before the abort, and the child was created after it.
      yield* executions.create({ jobId: entry.childJobId, scope: SCOPE, workMasterId: "wm-leaf", recipe: leafRecipe(), parent: { jobId: "jo-race", correlationId: entry.correlationId, action: "dose", rootJobId: "jo-race" } })
      yield* followParent(entry.childJobId)
      const child = (yield* executionOf(entry.childJobId))!.state
      expect(child).toMatchObject({ status: "aborted", error: "the parent job no longer waits for it" })
      expect(yield* indexEntriesOf([entry.childJobId])).toEqual([])
    }).pipe(Effect.provide(observer(randomPrefix("sfc-tree-race")))))
})
