import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { JobOrderDao, JobResponseDao, SfcStateDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

// Issue 9, item 6: every read and delete on a key that holds another Valkey type is a typed
// WrongType naming the key, in the error channel, never a defect.

const prefix = randomPrefix()
const services = Layer.mergeAll(JobOrderDao.Default, JobResponseDao.Default, SfcStateDao.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix }))
)

/** Replaces `key` with a string, a type no document or index ever has, and returns it. */
const plantString = (key: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    yield* unsafeCommand(valkey, "plant", (c) => c.del(key).then(() => c.set(key, "planted")))
    return key
  })

/** Replaces `key` with a list (for the one key that is a string itself). */
const plantList = (key: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    yield* unsafeCommand(valkey, "plant", (c) => c.del(key).then(() => c.rpush(key, "planted")))
    return key
  })

const expectWrongType = <A, E>(call: Effect.Effect<A, E>, key: string, expected: string, actual = "string") =>
  Effect.gen(function* () {
    // Effect.flip fails the test with the defect itself if the call dies instead of failing.
    const error = yield* Effect.flip(call)
    expect(error).toMatchObject({ _tag: "WrongType", key, expected, actual })
  })

layer(services)("reads and deletes on a key of the wrong type", (it) => {
  it.effect("JobOrderDao.get, delete, list and outcome fail with WrongType naming the key", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const orders = yield* JobOrderDao
      const doc = yield* plantString(yield* valkey.key("jobOrder", { id: "wt-jo" }))
      yield* expectWrongType(orders.get("wt-jo"), doc, "hash")
      yield* expectWrongType(orders.delete({ id: "wt-jo" }), doc, "hash")
      yield* expectWrongType(orders.outcome("wt-jo", "some-op"), doc, "hash")
      const list = yield* plantString(yield* valkey.key("jobOrderList", { scope: "wt-scope" }))
      yield* expectWrongType(orders.list("wt-scope"), list, "zset")
      // Nothing was changed: the planted keys are still there as they were.
      expect(yield* unsafeCommand(valkey, "get", (c) => Promise.all([c.get(doc), c.get(list)]))).toEqual(["planted", "planted"])
    })
  )

  it.effect("JobResponseDao.getMany fails with WrongType naming the corrupted document", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const responses = yield* JobResponseDao
      // Its own scope: the job order list of wt-scope is planted with a string above, and a response put reads it.
      yield* responses.put({ id: "wt-ok", scope: "wt-responses", orderId: "wt-o", state: "", doc: "{}", expectedVersion: 0 })
      const bad = yield* plantString(yield* valkey.key("jobResponse", { id: "wt-jr" }))
      yield* expectWrongType(responses.getMany(["wt-ok", "wt-jr"]), bad, "hash")
      expect((yield* responses.getMany(["wt-ok", "wt-missing"])).map((d) => d.id)).toEqual(["wt-ok"])
    })
  )

  it.effect("SfcStateDao.get, listActive, due, waiting, eventApplied and delete fail with WrongType naming the key", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const sfc = yield* SfcStateDao
      const state = yield* plantString(yield* valkey.key("sfcState", { jobId: "wt-job" }))
      yield* expectWrongType(sfc.get("wt-job"), state, "hash")
      yield* expectWrongType(sfc.delete({ jobId: "wt-job", waits: [] }), state, "hash")
      const active = yield* plantString(yield* valkey.key("sfcActive", { scope: "wt-scope" }))
      yield* expectWrongType(sfc.listActive("wt-scope"), active, "set")
      const due = yield* plantString(yield* valkey.key("sfcDue", { scope: "wt-scope" }))
      yield* expectWrongType(sfc.due("wt-scope", Date.now(), 10), due, "zset")
      const waits = yield* plantString(yield* valkey.key("sfcWaits", { scope: "wt-scope", typeId: "scan" }))
      yield* expectWrongType(sfc.waiting("wt-scope", "scan"), waits, "zset")
      const event = yield* plantList(yield* valkey.key("sfcEvent", { scope: "wt-scope", source: "src", id: "e1" }))
      yield* expectWrongType(sfc.eventApplied("wt-scope", "src", "e1"), event, "string", "list")
      expect(yield* unsafeCommand(valkey, "get", (c) => c.get(state))).toBe("planted")
    })
  )
})
