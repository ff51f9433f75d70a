import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { JobOrderDao, JobResponseDao, type SfcJobOrderMoveInput, type SfcJobResponseInput, SfcStateDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { manyWith } from "./SfcStateKit.js"

// compareAndSetMany with a job order move: the move's put in the same script call as the state.

const prefix = randomPrefix()
const services = Layer.mergeAll(SfcStateDao.Default, JobOrderDao.Default, JobResponseDao.Default).pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

const state = JSON.stringify({ status: "running" })
const move = (scope: string, expectedVersion: number, extra: Partial<SfcJobOrderMoveInput> = {}): SfcJobOrderMoveInput => ({
  scope, expectedVersion, doc: JSON.stringify({ moved: true }), priority: 3, change: "Run", op: "op-run", origin: '{"kind":"engine"}', ...extra
})

const storeJobOrder = (id: string, scope: string) =>
  Effect.flatMap(JobOrderDao, (dao) => dao.put({ id, scope, priority: 1, expectedVersion: 0, doc: JSON.stringify({ moved: false }) }))

const changesOf = (scope: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("changes", { scope })
    const entries = yield* unsafeCommand(valkey, "xrange", (c) => c.xrange(key, "-", "+"))
    return entries.map(([, fields]) => Object.fromEntries(fields.flatMap((value, i) => (i % 2 === 0 ? [[value, fields[i + 1]]] : []))))
  })

const response = (id: string, scope: string, orderId: string): SfcJobResponseInput => ({
  id, scope, orderId, state: "Ended_Completed", startTime: 1000, doc: JSON.stringify({ ID: id, JobOrderID: orderId }), op: `op-${id}`, change: "ResultUpdate"
})

describe("SfcStateDao.compareAndSetMany with a job response", () => {
  it.effect("creates the response with the state, indexed as JobResponseDao.put indexes it; an existing one is left alone", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const responses = yield* JobResponseDao
      const [first] = yield* dao.compareAndSetMany([manyWith("r-1", "r", 0, state, { jobResponse: response("resp-1", "r", "r-1") })])
      expect(Result.getOrThrow(first!)).toMatchObject({ version: 1, responseVersion: 1 })
      expect(yield* responses.get("resp-1")).toMatchObject({ version: 1, scope: "r", state: "Ended_Completed", orderId: "r-1" })
      expect((yield* responses.byOrder("r-1")).id).toBe("resp-1")
      const valkey = yield* Valkey
      const byState = yield* valkey.key("jobResponseByState", { scope: "r", state: "Ended_Completed" })
      expect(yield* unsafeCommand(valkey, "smembers", (c) => c.smembers(byState))).toEqual(["resp-1"])
      expect((yield* changesOf("r")).at(-1)).toMatchObject({ kind: "jobresponse", id: "resp-1", change: "ResultUpdate", v: "1", op: "op-resp-1" })
      // Stored already (a redelivery): left as it is, the state still written.
      const [again] = yield* dao.compareAndSetMany([manyWith("r-1", "r", 1, state, { jobResponse: { ...response("resp-1", "r", "r-1"), doc: "{}" } })])
      expect(Result.getOrThrow(again!)).toMatchObject({ version: 2, responseVersion: 0 })
      expect((yield* responses.get("resp-1")).doc).toBe(JSON.stringify({ ID: "resp-1", JobOrderID: "r-1" }))
    }).pipe(Effect.provide(services))
  )
})

describe("SfcStateDao.compareAndSetMany with a job order move", () => {
  it.effect("writes the move with the state: the document, its version, its list score and a change entry; the job order read sees its version", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const jobOrders = yield* JobOrderDao
      yield* storeJobOrder("m-1", "m")
      const [written] = yield* dao.compareAndSetMany([
        manyWith("m-1", "m", 0, state, { jobOrderMove: move("m", 1), directSend: { correlationIds: [], pointerTtlMs: 1000, readJobOrder: true } })
      ])
      // The writer has the document its move wrote: the read gives the version without it.
      expect(Result.getOrThrow(written!)).toMatchObject({ version: 1, jobOrderVersion: 2, jobOrder: { version: 2, doc: undefined } })
      expect(yield* jobOrders.get("m-1")).toMatchObject({ version: 2, scope: "m", doc: JSON.stringify({ moved: true }) })
      const valkey = yield* Valkey
      const listKey = yield* valkey.key("jobOrderList", { scope: "m" })
      expect(yield* unsafeCommand(valkey, "zscore", (c) => c.zscore(listKey, "m-1"))).toBe("3")
      const changes = yield* changesOf("m")
      expect(changes.at(-1)).toMatchObject({ kind: "joborder", id: "m-1", change: "Run", v: "2", op: "op-run", origin: '{"kind":"engine"}' })
    }).pipe(Effect.provide(services))
  )

  it.effect("a job order at another version, in another scope, missing or of another type is left alone, and the state is written", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const jobOrders = yield* JobOrderDao
      const valkey = yield* Valkey
      yield* storeJobOrder("n-1", "n")
      yield* storeJobOrder("n-2", "other")
      yield* unsafeCommand(valkey, "corrupt", (c) => c.set(valkey.keys.key("jobOrder", { id: "n-4" }) as string, "not a hash"))
      const results = yield* dao.compareAndSetMany([
        manyWith("n-1", "n", 0, state, { jobOrderMove: move("n", 7), directSend: { correlationIds: [], pointerTtlMs: 1000, readJobOrder: true } }),
        manyWith("n-2", "n", 0, state, { jobOrderMove: move("n", 1) }),
        manyWith("n-3", "n", 0, state, { jobOrderMove: move("n", 1) }),
        manyWith("n-4", "n", 0, state, { jobOrderMove: move("n", 1) })
      ])
      expect(results.map((result) => Result.getOrThrow(result))).toEqual(
        [1, 2, 3, 4].map(() => expect.objectContaining({ version: 1, jobOrderVersion: 0 }))
      )
      expect(yield* jobOrders.get("n-1")).toMatchObject({ version: 1, doc: JSON.stringify({ moved: false }) })
      // A move that did not land: the job order read brings the document back.
      expect(Result.getOrThrow(results[0]!).jobOrder).toEqual({ version: 1, doc: JSON.stringify({ moved: false }) })
      expect(yield* jobOrders.get("n-2")).toMatchObject({ version: 1, scope: "other" })
      expect((yield* changesOf("n")).filter((change) => change["change"] === "Run")).toEqual([])
    }).pipe(Effect.provide(services))
  )

  it.effect("a malformed move is InvalidInput for its job alone; nothing of that job is written", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const results = yield* dao.compareAndSetMany([
        manyWith("b-1", "b", 0, state, { jobOrderMove: move("b", 0) }),
        manyWith("b-2", "b", 0, state, { jobOrderMove: move("b", 1, { change: "" }) }),
        manyWith("b-3", "b", 0, state)
      ])
      expect(results.map((result) => Result.match(result, { onFailure: (e) => e._tag === "InvalidInput" && e.field, onSuccess: (w) => w.version }))).toEqual([
        "jobOrderMove.expectedVersion",
        "jobOrderMove.change",
        1
      ])
      expect(Result.getOrThrow((yield* dao.getMany(["b-1", "b-2"]))[0]!)._tag).toBe("None")
    }).pipe(Effect.provide(services))
  )
})
