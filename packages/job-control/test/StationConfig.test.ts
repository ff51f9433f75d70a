import { Effect, Option } from "effect"
import { expect, layer } from "@effect/vitest"
import { referenceKinds } from "@microdcs/keyschema"
import { ReturnStatus } from "@microdcs/job-state"
import { JobAcceptanceDao, ReferenceListDao, WorkMasterDao } from "@microdcs/store"
import { RECIPE_SCHEMA_ID } from "@microdcs/sfc"
import { referenceIdField } from "@microdcs/job-control"
import { configRequest, fixture, handle, handleOk, snapshot, world } from "./Kit.js"

layer(world())("station configuration", (it) => {
  for (const kind of referenceKinds) {
    const field = referenceIdField[kind]
    it.effect(`${kind}: PUT adds (one object or a list), DELETE removes, both idempotent`, () =>
      Effect.gen(function* () {
        const refs = yield* ReferenceListDao
        const scope = `cfg-${kind}`
        const one = yield* handleOk(configRequest(kind, `${scope}/station`, { [field]: "a", Description: "ISA-95 fields are ignored" }))
        expect(one.reply).toEqual({
          type: `com.github.aschamberger.ISA95-JOBCONTROL_V2.config.${kind}Response.v1`,
          data: { ReturnStatus: 1, Added: 1 },
          status: 1
        })
        const many = yield* handleOk(configRequest(kind, scope, [{ [field]: "a" }, { [field]: "b" }, { [field]: "c" }], "PUT"))
        expect(many.reply.data).toEqual({ ReturnStatus: 1, Added: 2 })
        expect(yield* refs.members(kind, scope)).toEqual(["a", "b", "c"])
        const removed = yield* handleOk(configRequest(kind, scope, [{ [field]: "a" }, { [field]: "x" }], "DELETE"))
        expect(removed.reply.data).toEqual({ ReturnStatus: 1, Removed: 1 })
        const again = yield* handleOk(configRequest(kind, scope, { [field]: "a" }, "delete"))
        expect(again.reply.data).toEqual({ ReturnStatus: 1, Removed: 0 })
        expect(yield* refs.members(kind, scope)).toEqual(["b", "c"])
        expect(one.statusEvents).toEqual([])
      })
    )
  }

  it.effect("workmaster: PUT stores the document, DELETE removes it; another scope's is left alone", () =>
    Effect.gen(function* () {
      const workMasters = yield* WorkMasterDao
      const doc = { ID: "wm-plain", Description: "no recipe", Parameters: [{ ID: "speed", Value: 3 }] }
      const put = yield* handleOk(configRequest("workmaster", "wm", doc))
      expect(put.reply.data).toEqual({ ReturnStatus: 1, ID: "wm-plain", Version: 1 })
      expect(JSON.parse((yield* workMasters.get("wm-plain")).doc)).toEqual(doc)
      expect(yield* workMasters.isMember("wm", "wm-plain")).toBe(true)
      const replaced = yield* handleOk(configRequest("workmaster", "wm", { ...doc, Description: "v2" }))
      expect(replaced.reply.data).toMatchObject({ Version: 2 })

      const foreign = yield* handleOk(configRequest("workmaster", "other", { ID: "wm-plain" }, "DELETE"))
      expect(foreign.reply.data).toEqual({ ReturnStatus: 1, ID: "wm-plain", Removed: 0 })
      expect((yield* workMasters.get("wm-plain")).scope).toBe("wm")
      const moved = yield* handle(configRequest("workmaster", "other", doc))
      expect(moved.reply).toMatchObject({ status: ReturnStatus.INVALID_REQUEST, error: { kind: "ScopeConflict" } })

      const deleted = yield* handleOk(configRequest("workmaster", "wm", { ID: "wm-plain" }, "DELETE"))
      expect(deleted.reply.data).toEqual({ ReturnStatus: 1, ID: "wm-plain", Removed: 1 })
      expect(yield* workMasters.isMember("wm", "wm-plain")).toBe(false)
      expect((yield* Effect.result(workMasters.get("wm-plain")))._tag).toBe("Failure")
    })
  )

  it.effect("workmaster: a recipe work master is validated first; the fixture passes", () =>
    Effect.gen(function* () {
      const workMasters = yield* WorkMasterDao
      yield* handleOk(configRequest("workmaster", "recipes", fixture("work-master-axle.json")))
      expect(JSON.parse((yield* workMasters.get("wm-axle-v1")).doc)).toEqual(fixture("work-master-axle.json"))
    })
  )

  it.effect("workmaster: a recipe with errors is rejected with every problem listed, nothing stored", () =>
    Effect.gen(function* () {
      const broken = {
        ID: "wm-broken",
        dataschema: RECIPE_SCHEMA_ID,
        data: {
          Steps: [{ Name: "Init", Initial: true }, { Name: "Work" }, { Name: "Work" }],
          Transitions: [{ Source: "Init", Target: "Nowhere", Condition: "true" }],
          Actions: [{ Name: "hold", Step: "Work", Qualifier: "X", Interaction: "push_command", TypeId: "t.v1", TimeoutSeconds: 0 }]
        }
      }
      const before = yield* snapshot
      const result = yield* handle(configRequest("workmaster", "recipes", broken))
      expect(result.reply.status).toBe(ReturnStatus.INVALID_REQUEST)
      expect(result.reply.error?.kind).toBe("InvalidRecipe")
      const problems = result.reply.data["Problems"] as ReadonlyArray<{ rule: string; message: string }>
      const rules = new Set(problems.map((p) => p.rule))
      for (const rule of ["duplicate-name", "unknown-reference", "qualifier", "timeout"]) expect(rules).toContain(rule)
      // The message lists every problem too, for a reader of the mdcserrormessage attribute.
      for (const problem of problems) expect(result.reply.error?.message).toContain(problem.message)
      expect(yield* snapshot).toEqual(before)
    })
  )

  it.effect("jobacceptance: PUT sets the limit, DELETE clears it", () =>
    Effect.gen(function* () {
      const limits = yield* JobAcceptanceDao
      const put = yield* handleOk(configRequest("jobacceptance", "lim/x", { Limit: 5 }))
      expect(put.reply.data).toEqual({ ReturnStatus: 1, Limit: 5 })
      expect(yield* limits.get("lim")).toEqual(Option.some(5))
      yield* handleOk(configRequest("jobacceptance", "lim", { MaxDownloadableJobOrders: 0 }))
      expect(yield* limits.get("lim")).toEqual(Option.some(0))
      const cleared = yield* handleOk(configRequest("jobacceptance", "lim", undefined, "DELETE"))
      expect(cleared.reply.data).toEqual({ ReturnStatus: 1, Removed: 1 })
      expect(yield* limits.get("lim")).toEqual(Option.none())
    })
  )
})
