import { Effect, Result } from "effect"
import { describe, expect, layer } from "@effect/vitest"
import {
  allJobStates,
  decodeJobOrderRecord,
  isAllowed,
  type JobState,
  type Method,
  methodPayload,
  methods,
  normalizedName,
  retiresJob,
  ReturnStatus,
  transition
} from "@microdcs/job-state"
import { JobOrderDao } from "@microdcs/store"
import { handle, jobOrderTtl, lastChange, methodRequest, putJobOrderInState, world } from "./Kit.js"

const SCOPE = "table"
const RETENTION_MS = 3_600_000

/** What the table says a method from a state must answer (InitialState = the id does not exist). */
const expectedStatus = (method: Method, state: JobState): number => {
  const creates = method === "Store" || method === "StoreAndStart"
  if (state.main === "InitialState") return creates ? ReturnStatus.NO_ERROR : ReturnStatus.UNKNOWN_JOB_ORDER_ID
  // An existing id is never overwritten by a create, whatever its state.
  if (creates) return ReturnStatus.UNABLE_TO_ACCEPT_JOB_ORDER
  return isAllowed(state, method) ? ReturnStatus.NO_ERROR : ReturnStatus.INVALID_JOB_ORDER_STATUS
}

const cases = methods.flatMap((method) => allJobStates.map((state) => ({ method, state, name: normalizedName(state) })))

layer(world({ retentionMs: RETENTION_MS }))("every method from every state", (it) => {
  it("covers 11 methods × 14 states", () => expect(cases).toHaveLength(154))

  for (const { method, state, name } of cases) {
    const expected = expectedStatus(method, state)
    it.effect(`${method} from ${name} → ${expected}`, () =>
      Effect.gen(function* () {
        const dao = yield* JobOrderDao
        const id = `${method}-${name}`
        const jobOrder = { JobOrderID: id, Priority: 2, Note: "original" }
        const before = state.main === "InitialState" ? undefined : yield* putJobOrderInState(SCOPE, jobOrder, state)
        const data =
          methodPayload[method] === "JobOrder"
            ? { JobOrder: { ...jobOrder, Note: "replaced" }, Comment: "by test" }
            : { JobOrderID: id, Comment: [{ Text: "by test", Locale: "en" }] }
        const result = yield* handle(methodRequest(method, SCOPE, data))
        expect(result.reply.data).toMatchObject({ ReturnStatus: expected, JobOrderID: id })
        expect(result.reply.status).toBe(expected)
        expect(result.reply.type).toBe(`org.opcfoundation.ISA95-JOBCONTROL_V2.${method}Response.v2`)

        if (expected !== ReturnStatus.NO_ERROR) {
          expect(result.reply.error?.kind).toBeTypeOf("string")
          expect(result.statusEvents).toEqual([])
          if (before === undefined) expect(yield* Effect.result(dao.get(id))).toMatchObject({ _tag: "Failure", failure: { _tag: "NotFound" } })
          else expect((yield* dao.get(id)).version).toBe(before.version)
          return
        }

        const target = Result.getOrThrow(transition(state, method))
        const version = (before?.version ?? 0) + 1
        expect(result.reply.error).toBeUndefined()
        expect(result.statusEvents).toEqual([{ jobOrderId: id, scope: SCOPE, state: normalizedName(target), version, method }])
        const stored = yield* dao.get(id)
        expect(stored.version).toBe(version)
        const record = Result.getOrThrow(decodeJobOrderRecord(stored.doc))
        expect(normalizedName(record.state)).toBe(normalizedName(target))
        expect(record.comment).toBe("by test")
        // Update replaces the document; every other method keeps it.
        expect(record.jobOrder["Note"]).toBe(method === "Update" || before === undefined ? "replaced" : "original")
        expect(yield* lastChange(SCOPE)).toEqual({ id, change: method, v: version })

        const listed = (yield* dao.list(SCOPE, { count: 1000 })).items.some((i) => i.id === id)
        const ttl = yield* jobOrderTtl(id)
        if (retiresJob(method)) {
          expect(listed).toBe(false)
          expect(ttl).toBeGreaterThan(0)
          expect(ttl).toBeLessThanOrEqual(RETENTION_MS)
        } else {
          expect(listed).toBe(true)
          expect(ttl).toBe(-1)
        }
      })
    )
  }
})

describe("transitions under contention", () => {
  layer(world())((it) => {
    it.effect("concurrent Updates of one job order all land, each on its own version (re-read on conflict)", () =>
      Effect.gen(function* () {
        const dao = yield* JobOrderDao
        yield* handle(methodRequest("Store", "busy", { JobOrder: { JobOrderID: "contended" } }))
        const results = yield* Effect.all(
          [1, 2, 3, 4, 5].map((n) => handle(methodRequest("Update", "busy", { JobOrder: { JobOrderID: "contended", Round: n } }))),
          { concurrency: "unbounded" }
        )
        expect(results.map((r) => r.reply.status)).toEqual([1, 1, 1, 1, 1])
        const versions = results.map((r) => r.statusEvents[0]!.version).sort()
        expect(versions).toEqual([2, 3, 4, 5, 6])
        expect((yield* dao.get("contended")).version).toBe(6)
      })
    )

    it.effect("a job order of another scope is unknown, and is left untouched", () =>
      Effect.gen(function* () {
        const dao = yield* JobOrderDao
        yield* handle(methodRequest("Store", "scope-a", { JobOrder: { JobOrderID: "theirs" } }))
        const start = yield* handle(methodRequest("Start", "scope-b/line", { JobOrderID: "theirs" }))
        expect(start.reply.data).toEqual({ ReturnStatus: ReturnStatus.UNKNOWN_JOB_ORDER_ID, JobOrderID: "theirs" })
        const update = yield* handle(methodRequest("Update", "scope-b", { JobOrder: { JobOrderID: "theirs" } }))
        expect(update.reply.status).toBe(ReturnStatus.UNKNOWN_JOB_ORDER_ID)
        // Create-only: the id exists (in another scope), so a Store elsewhere cannot take it over.
        const store = yield* handle(methodRequest("Store", "scope-b", { JobOrder: { JobOrderID: "theirs" } }))
        expect(store.reply).toMatchObject({ status: ReturnStatus.UNABLE_TO_ACCEPT_JOB_ORDER, error: { kind: "AlreadyExists" } })
        expect((yield* dao.get("theirs")).version).toBe(1)
      })
    )

    it.effect("the scope is the subject up to the first slash", () =>
      Effect.gen(function* () {
        const dao = yield* JobOrderDao
        const stored = yield* handle(methodRequest("StoreAndStart", "cell-4/station/7", { JobOrder: { JobOrderID: "scoped", Priority: 9 } }))
        expect(stored.statusEvents).toEqual([{ jobOrderId: "scoped", scope: "cell-4", state: "AllowedToStart_Ready", version: 1, method: "StoreAndStart" }])
        expect((yield* dao.get("scoped")).scope).toBe("cell-4")
        expect((yield* dao.list("cell-4")).items).toEqual([{ id: "scoped", priority: 9 }])
      })
    )
  })
})
