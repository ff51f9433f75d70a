import { Effect, Context, Layer } from "effect"
import type { ReferenceKind } from "@microdcs/keyschema"
import { addReferences } from "@microdcs/lua-scripts"
import type { ConnectionError, InvalidInput, WrongType } from "./Errors.js"
import { validateText, validateTexts } from "./Input.js"
import { typedCommand, wrongTypeError } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"

type ReferenceError = WrongType | InvalidInput | ConnectionError

/**
 * The five ISA-95 reference lists (`ref:{kind}:{scope}`): one generic DAO for all five kinds,
 * the kind a checked key part. Job order acceptance checks which referenced ids are missing in
 * one round trip.
 */
export class ReferenceListDao extends Context.Service<ReferenceListDao>()("@microdcs/store/ReferenceListDao", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const scopesKey = valkey.keys.key("scopes", {}) as string
    const nudgeChannel = valkey.keys.key("nudge", { kind: "changes" }) as string

    const listKey = (kind: ReferenceKind, scope: string) => valkey.key("referenceList", { kind, scope })

    /** Adds ids (and registers the scope); returns how many were new. */
    const add = (kind: ReferenceKind, scope: string, ids: ReadonlyArray<string>): Effect.Effect<number, ReferenceError> =>
      Effect.gen(function* () {
        const list = yield* listKey(kind, scope)
        yield* validateTexts("ids", ids)
        // Nothing to add: the scope gets no list, so it is not registered either.
        if (ids.length === 0) return 0
        const reply = yield* valkey.script(addReferences, { list, scopes: scopesKey }, { scope, nudgeChannel, ids })
        return reply.status === "ok" ? reply.added : yield* wrongTypeError(reply)
      })

    /** Removes ids; returns how many were present. The scope stays registered. */
    const remove = (kind: ReferenceKind, scope: string, ids: ReadonlyArray<string>): Effect.Effect<number, ReferenceError> =>
      Effect.gen(function* () {
        const list = yield* listKey(kind, scope)
        yield* validateTexts("ids", ids)
        if (ids.length === 0) return 0
        return yield* typedCommand(valkey, "remove references", list, "set", (c) => c.srem(list, ...ids))
      })

    const isMember = (kind: ReferenceKind, scope: string, id: string): Effect.Effect<boolean, ReferenceError> =>
      Effect.gen(function* () {
        const list = yield* listKey(kind, scope)
        yield* validateText("id", id)
        return (yield* typedCommand(valkey, "is reference", list, "set", (c) => c.sismember(list, id))) === 1
      })

    /** Every id of the list, sorted (SMEMBERS order is arbitrary). */
    const members = (kind: ReferenceKind, scope: string): Effect.Effect<ReadonlyArray<string>, ReferenceError> =>
      Effect.gen(function* () {
        const list = yield* listKey(kind, scope)
        const all = yield* typedCommand(valkey, "list references", list, "set", (c) => c.smembers(list))
        return all.sort()
      })

    /** The given ids that are not in the list, in the given order without repeats: one SMISMEMBER. */
    const missing = (kind: ReferenceKind, scope: string, ids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string>, ReferenceError> =>
      Effect.gen(function* () {
        const list = yield* listKey(kind, scope)
        yield* validateTexts("ids", ids)
        const unique = [...new Set(ids)]
        if (unique.length === 0) return []
        const found = yield* typedCommand(valkey, "missing references", list, "set", (c) => c.smismember(list, ...unique))
        return unique.filter((_, i) => found[i] !== 1)
      })

    return { add, remove, isMember, members, missing } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
