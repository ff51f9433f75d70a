import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { PollerEntry } from "@microdcs/poller"
import { Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { defaultEngineOptions } from "@microdcs/sfc-runtime"
// The change-batch handler is internal to the runtime; the test plays the poller delivering a batch.
import { handleChangeBatch } from "../src/WorkBatches.js"
import { engineWorld, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import { executionOf, jobOrderFor, linearRecipe, push, recipeWorkMaster, SCOPE } from "./RuntimeKit.js"

/** The starts of a change batch, together: one read of their orders and work masters, one call to the loop. */

const startEntry = (jobId: string, n: number): PollerEntry => ({
  kind: "changes", scope: SCOPE, stream: "changes", id: `1-${n}`, fields: { kind: "joborder", id: jobId, change: "StoreAndStart" }, deliveries: 1
})

// Only the services: no poller takes the entries before the test hands them over.
const world = () => engineWorld({}, { roles: { engine: false, sweep: false } })

describe("SFC runtime: the starts of a change batch", () => {
  it.live("start together; a job already started, one not startable and one without a recipe each get their own outcome", () =>
    Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-batch", linearRecipe(["A"], [push("a", "A")])))
      yield* putWorkMaster(SCOPE, { ID: "wm-plain" })
      for (const id of ["jo-b1", "jo-b2", "jo-b3"]) yield* putJobOrder(SCOPE, jobOrderFor(id, "wm-batch"))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-plain", "wm-plain"))
      const handle = handleChangeBatch(defaultEngineOptions)
      expect((yield* handle([startEntry("jo-b1", 1)])).failures).toEqual([])
      const first = yield* executionOf("jo-b1")
      const entries = ["jo-b1", "jo-b2", "jo-plain", "jo-nothing", "jo-b3"].map(startEntry)
      expect((yield* handle(entries)).failures).toEqual([])
      // Started once: the batch's second start of jo-b1 changed nothing.
      expect((yield* executionOf("jo-b1"))?.version).toBe(first?.version)
      for (const id of ["jo-b2", "jo-b3"]) expect((yield* executionOf(id))?.state.status).toBe("running")
      expect(yield* executionOf("jo-plain")).toBeUndefined()
    }).pipe(Effect.provide(world().layer))
  )

  it.live("a job order key the batch cannot read fails only its own entry: the others start one by one", () =>
    Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-batch", linearRecipe(["A"], [push("a", "A")])))
      for (const id of ["jo-c1", "jo-c2"]) yield* putJobOrder(SCOPE, jobOrderFor(id, "wm-batch"))
      const valkey = yield* Valkey
      const broken = yield* valkey.key("jobOrder", { id: "jo-broken" })
      yield* unsafeCommand(valkey, "corrupt", (c) => c.set(broken, "not a hash"))
      const outcome = yield* handleChangeBatch(defaultEngineOptions)(["jo-c1", "jo-broken", "jo-c2"].map(startEntry))
      expect(outcome.failures.map((f) => f.id)).toEqual(["1-1"])
      for (const id of ["jo-c1", "jo-c2"]) expect((yield* executionOf(id))?.state.status).toBe("running")
    }).pipe(Effect.provide(world().layer))
  )
})
