import { describe, expect, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import { Effect, Layer, Redacted } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { JobOrderDao, JobResponseDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

// Issue 9, item 7: an ACL user limited to another prefix gets a typed NoPermission that names
// the key and the command, in the error channel, instead of a defect.

const prefix = randomPrefix()
const user = `acl-${prefix}`
const password = randomBytes(12).toString("hex")
const adminLayer = ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })
const restricted = Layer.mergeAll(JobOrderDao.Default, JobResponseDao.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix, username: user, password: Redacted.make(password) }))
)

/** A user that may do anything, but only on keys of another island's prefix. */
const withRestrictedUser = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.flatMap(Valkey, (admin) =>
      unsafeCommand(admin, "acl setuser", (c) => c.call("ACL", "SETUSER", user, "on", `>${password}`, `~other-${prefix}:*`, "+@all"))
    ),
    () => body,
    () => Effect.flatMap(Valkey, (admin) => unsafeCommand(admin, "acl deluser", (c) => c.call("ACL", "DELUSER", user))).pipe(Effect.orDie)
  ).pipe(Effect.provide(adminLayer))

describe("a user without permission on the prefix", () => {
  it.effect("gets NoPermission naming the key and the command, for commands and scripts", () =>
    withRestrictedUser(
      Effect.gen(function* () {
        const valkey = yield* Valkey
        const orders = yield* JobOrderDao
        const responses = yield* JobResponseDao
        const doc = yield* valkey.key("jobOrder", { id: "jo-1" })
        expect(yield* Effect.flip(orders.get("jo-1"))).toMatchObject({ _tag: "NoPermission", key: doc, command: "HGETALL" })
        const put = yield* Effect.flip(orders.put({ id: "jo-1", scope: "s1", doc: "{}", priority: 1, expectedVersion: 0 }))
        expect(put).toMatchObject({ _tag: "NoPermission", key: doc, command: "EVALSHA", operation: "put-joborder" })
        expect(put.message).toContain("NOPERM")
        const list = yield* valkey.key("jobOrderList", { scope: "s1" })
        expect(yield* Effect.flip(orders.list("s1"))).toMatchObject({ _tag: "NoPermission", key: list })
        const pointer = yield* valkey.key("jobResponseByOrder", { orderId: "jo-1" })
        expect(yield* Effect.flip(responses.byOrder("jo-1"))).toMatchObject({ _tag: "NoPermission", key: pointer })
        const page = yield* Effect.flip(responses.getMany(["a", "b"]))
        expect(page).toMatchObject({ _tag: "NoPermission", key: yield* valkey.key("jobResponse", { id: "a" }) })
      }).pipe(Effect.provide(restricted))
    )
  )
})
