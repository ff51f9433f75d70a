import { Effect } from "effect"
import { describe, expect, layer } from "@effect/vitest"
import { ReturnStatus } from "@microdcs/job-state"
import { JobOrderDao } from "@microdcs/store"
import { type ConfigKind, referenceIdField } from "@microdcs/job-control"
import { configRequest, fixture, handle, handleOk, methodRequest, snapshot, store, world } from "./Kit.js"

const UNABLE = ReturnStatus.UNABLE_TO_ACCEPT_JOB_ORDER

describe("acceptance by limit", () => {
  layer(world())((it) => {
    it.effect("two concurrent Stores against a limit of one: exactly one is accepted", () =>
      Effect.gen(function* () {
        yield* handleOk(configRequest("jobacceptance", "one", { Limit: 1 }))
        const results = yield* Effect.all(
          ["race-a", "race-b"].map((id) => store("one", { JobOrderID: id })),
          { concurrency: "unbounded" }
        )
        expect(results.map((r) => r.reply.status).sort()).toEqual([ReturnStatus.NO_ERROR, UNABLE])
        const loser = results.find((r) => r.reply.status === UNABLE)!
        expect(loser.reply.error).toEqual({ kind: "LimitReached", message: "scope one accepts at most 1 job order(s) and already holds 1" })
        expect(loser.statusEvents).toEqual([])
        expect((yield* Effect.flatMap(JobOrderDao, (dao) => dao.list("one"))).items).toHaveLength(1)
      })
    )

    it.effect("Update of a listed job order at the limit does not count itself; Cancel frees the slot", () =>
      Effect.gen(function* () {
        yield* handleOk(configRequest("jobacceptance", "full", { Limit: 2 }))
        yield* handleOk(methodRequest("Store", "full", { JobOrder: { JobOrderID: "f1" } }))
        yield* handleOk(methodRequest("StoreAndStart", "full", { JobOrder: { JobOrderID: "f2" } }))
        expect((yield* store("full", { JobOrderID: "f3" })).reply.error?.kind).toBe("LimitReached")
        yield* handleOk(methodRequest("Update", "full", { JobOrder: { JobOrderID: "f2", Priority: 4 } }))
        yield* handleOk(methodRequest("Cancel", "full", { JobOrderID: "f1" }))
        yield* handleOk(methodRequest("Store", "full", { JobOrder: { JobOrderID: "f3" } }))
      })
    )

    it.effect("0 means unlimited, and a per-scope limit can be removed again", () =>
      Effect.gen(function* () {
        yield* handleOk(configRequest("jobacceptance", "open", { Limit: 0 }))
        for (const id of ["o1", "o2", "o3"]) yield* handleOk(methodRequest("Store", "open", { JobOrder: { JobOrderID: id } }))
        yield* handleOk(configRequest("jobacceptance", "open", { Limit: 3 }))
        expect((yield* store("open", { JobOrderID: "o4" })).reply.status).toBe(UNABLE)
        yield* handleOk(configRequest("jobacceptance", "open", {}, "DELETE"))
        yield* handleOk(methodRequest("Store", "open", { JobOrder: { JobOrderID: "o4" } }))
      })
    )
  })

  layer(world({ defaultAcceptanceLimit: 1 }))("the configured default", (it) => {
    it.effect("applies to a scope without its own limit; the scope's own limit wins", () =>
      Effect.gen(function* () {
        yield* handleOk(methodRequest("Store", "dflt", { JobOrder: { JobOrderID: "d1" } }))
        expect((yield* store("dflt", { JobOrderID: "d2" })).reply.error?.kind).toBe("LimitReached")
        yield* handleOk(configRequest("jobacceptance", "dflt", { MaxDownloadableJobOrders: 2 }))
        yield* handleOk(methodRequest("Store", "dflt", { JobOrder: { JobOrderID: "d2" } }))
      })
    )
  })
})

/** A job order referencing exactly one id of `kind`. */
const referencing = (id: string, kind: ConfigKind, ref: string): Record<string, unknown> => {
  switch (kind) {
    case "equipment":
      return { JobOrderID: id, EquipmentRequirements: [{ ID: ref }] }
    case "materialclass":
      return { JobOrderID: id, MaterialRequirements: [{ MaterialClassID: ref }] }
    case "materialdefinition":
      return { JobOrderID: id, MaterialRequirements: [{ MaterialDefinitionID: ref }] }
    case "personnel":
      return { JobOrderID: id, PersonnelRequirements: [{ ID: ref }] }
    case "physicalasset":
      return { JobOrderID: id, PhysicalAssetRequirements: [{ ID: ref }] }
    default:
      return { JobOrderID: id, WorkMasterID: [{ ID: ref }] }
  }
}

/** The configuration event that makes `ref` known as a `kind` in `scope`. */
const configure = (kind: ConfigKind, scope: string, ref: string) =>
  kind === "workmaster"
    ? configRequest("workmaster", scope, { ID: ref, Description: "plain work master" })
    : configRequest(kind, scope, { [referenceIdField[kind as Exclude<ConfigKind, "workmaster" | "jobacceptance">]]: ref })

describe("acceptance by reference lists", () => {
  layer(world())((it) => {
    const kinds = ["equipment", "materialclass", "materialdefinition", "personnel", "physicalasset", "workmaster"] as const
    for (const kind of kinds) {
      it.effect(`an unknown ${kind} is refused with nothing written; once configured, accepted`, () =>
        Effect.gen(function* () {
          const scope = `refs-${kind}`
          const jobOrder = referencing(`job-${kind}`, kind, `${kind}-1`)
          // Known in another scope only: still unknown here.
          yield* handleOk(configure(kind, "elsewhere", `${kind}-1`))
          const before = yield* snapshot
          const refused = yield* handle(methodRequest("Store", scope, { JobOrder: jobOrder }))
          expect(refused.reply).toMatchObject({
            status: UNABLE,
            data: { ReturnStatus: UNABLE, JobOrderID: `job-${kind}` },
            error: { kind: "UnknownReference", message: `unknown ${kind}: ${kind}-1` }
          })
          expect(yield* snapshot).toEqual(before)
          // A work master id lives in one scope: move it over.
          if (kind === "workmaster") yield* handleOk(configRequest("workmaster", "elsewhere", { ID: `${kind}-1` }, "DELETE"))
          yield* handleOk(configure(kind, scope, `${kind}-1`))
          const accepted = yield* handle(methodRequest("Store", scope, { JobOrder: jobOrder }))
          expect(accepted.reply.status).toBe(ReturnStatus.NO_ERROR)
        })
      )
    }

    it.effect("every missing reference is named; the fixture job order is accepted once its station is configured", () =>
      Effect.gen(function* () {
        const jobOrder = fixture("job-order.json")
        const first = yield* handle(methodRequest("StoreAndStart", "axle", { JobOrder: jobOrder }))
        expect(first.reply.error?.message).toBe(
          "unknown equipment: station-7; unknown materialclass: axle; unknown materialdefinition: axle-front-a2; " +
            "unknown personnel: operator-12; unknown physicalasset: nutrunner-3; unknown workmaster: wm-axle-v1"
        )
        yield* handleOk(configRequest("equipment", "axle", [{ ID: "station-7" }]))
        yield* handleOk(configRequest("materialclass", "axle", { MaterialClassID: "axle" }))
        yield* handleOk(configRequest("materialdefinition", "axle", { MaterialDefinitionID: "axle-front-a2" }))
        yield* handleOk(configRequest("personnel", "axle", { ID: "operator-12" }))
        yield* handleOk(configRequest("physicalasset", "axle", { ID: "nutrunner-3" }))
        yield* handleOk(configRequest("workmaster", "axle", fixture("work-master-axle.json")))
        const accepted = yield* handle(methodRequest("StoreAndStart", "axle", { JobOrder: jobOrder }))
        expect(accepted.statusEvents).toEqual([
          { jobOrderId: "jo-axle-0001", scope: "axle", state: "AllowedToStart_Ready", version: 1, method: "StoreAndStart" }
        ])
      })
    )

    it.effect("Update is checked too: an unknown reference leaves the job order as it was", () =>
      Effect.gen(function* () {
        const dao = yield* JobOrderDao
        yield* handleOk(methodRequest("Store", "upd", { JobOrder: { JobOrderID: "u1" } }))
        const before = yield* snapshot
        const refused = yield* handle(methodRequest("Update", "upd", { JobOrder: { JobOrderID: "u1", PersonnelRequirements: [{ ID: "nobody" }] } }))
        expect(refused.reply.error).toEqual({ kind: "UnknownReference", message: "unknown personnel: nobody" })
        expect(yield* snapshot).toEqual(before)
        expect((yield* dao.get("u1")).version).toBe(1)
      })
    )
  })
})
