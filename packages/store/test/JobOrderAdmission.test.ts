import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { JobAcceptanceDao, JobOrderDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

const prefix = randomPrefix()
const services = Layer.merge(JobOrderDao.Default, JobAcceptanceDao.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix }))
)

layer(services)("JobOrderDao.admission", (it) => {
  it.effect("tells whether the id is taken and reads the scope's limit, in one call", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      const limits = yield* JobAcceptanceDao
      expect(yield* dao.admission("ad-1", "ad")).toEqual({ exists: false, limit: Option.none() })
      yield* dao.put({ id: "ad-1", scope: "elsewhere", doc: JSON.stringify({ JobOrderID: "ad-1" }), priority: 1, expectedVersion: 0 })
      yield* limits.set("ad", 3)
      // Taken whatever its scope: a create-only Store must refuse it.
      expect(yield* dao.admission("ad-1", "ad")).toEqual({ exists: true, limit: Option.some(3) })
      expect(yield* dao.admission("ad-2", "ad")).toEqual({ exists: false, limit: Option.some(3) })
    })
  )

  it.effect("a document key or a limit key of another type is WrongType; a bad id is InvalidInput", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      const valkey = yield* Valkey
      const docKey = valkey.keys.key("jobOrder", { id: "ad-list" }) as string
      const limitKey = valkey.keys.key("jobAcceptance", { scope: "ad-broken" }) as string
      yield* unsafeCommand(valkey, "corrupt", (c) => Promise.all([c.rpush(docKey, "x"), c.sadd(limitKey, "y")]))
      expect(yield* Effect.flip(dao.admission("ad-list", "ad"))).toMatchObject({ _tag: "WrongType", key: docKey, expected: "hash", actual: "list" })
      expect(yield* Effect.flip(dao.admission("ad-3", "ad-broken"))).toMatchObject({ _tag: "WrongType", key: limitKey, expected: "string", actual: "set" })
      expect(yield* Effect.flip(dao.admission("", "ad"))).toMatchObject({ _tag: "InvalidInput" })
    })
  )
})
