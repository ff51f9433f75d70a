import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Context } from "effect"
import { inject } from "vitest"
import { defineKeyFamilies, KeyFamilyError, KeyPartError } from "@microdcs/keyschema"
import { decodeWriteReply, defineScript } from "@microdcs/lua-scripts"
import { randomPrefix } from "@microdcs/test-utils"
import {
  type DocumentDeleteInput,
  type DocumentPutInput,
  makeDocumentDao,
  numberProblem,
  parseDocumentHash,
  typedCommand,
  Valkey,
  ValkeyLayer
} from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { IndexReadHook } from "@microdcs/store/testing"

// Issue 10, item 3: a team extends the store with a document type of its own through
// makeDocumentDao: its key families, its scripts, a spec; the DAO behaviour comes with it.

const recipeKeys = defineKeyFamilies({
  recipe: "recipe:{id}",
  recipeList: "recipe:list:{scope}",
  recipeByLine: "recipe:byline:{scope}:{line}"
})

const fixtures = new URL("./fixtures/recipe/", import.meta.url)

interface RecipeWriteArgs {
  readonly expectedVersion: number
  readonly scope: string
  readonly id: string
  readonly op: string
  readonly change: string
  readonly nudgeChannel: string
}

const putRecipe = defineScript({
  file: "put-recipe-6.lua",
  dir: fixtures,
  keys: ["doc", "list", "newLine", "oldLine", "scopes", "changes"],
  encodeArgs: (a: RecipeWriteArgs & { doc: string; line: string; storedLine: string; rank: number }) => [
    a.expectedVersion, a.scope, a.id, a.op, a.change, a.nudgeChannel, a.doc, a.line, a.storedLine, a.rank
  ],
  decodeReply: decodeWriteReply("put-recipe", ["ok", "conflict", "scope", "retry", "wrongtype"])
})

const deleteRecipe = defineScript({
  file: "delete-recipe-5.lua",
  dir: fixtures,
  keys: ["doc", "list", "line", "scopes", "changes"],
  encodeArgs: (a: RecipeWriteArgs & { line: string }) => [a.expectedVersion, a.scope, a.id, a.op, a.change, a.nudgeChannel, a.line],
  decodeReply: decodeWriteReply("delete-recipe", ["ok", "notfound", "conflict", "retry", "wrongtype"])
})

interface PutRecipe extends DocumentPutInput {
  /** The line the recipe runs on: indexed, so a put must read the stored one. */
  readonly line: string
  /** The list order, lowest first. */
  readonly rank: number
}

/** The extension's DAO, as a team would write it: a spec plus its own lookup. */
class RecipeDao extends Context.Service<RecipeDao>()("test/RecipeDao", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const keys = valkey.keys.extend(recipeKeys)
    if (keys instanceof KeyFamilyError) return yield* Effect.die(keys)
    const lineKey = (scope: string, line: string) => keys.key("recipeByLine", { scope, line })

    const documents = makeDocumentDao(valkey, {
      kind: "recipe",
      noun: "recipe",
      documentKey: (id) => keys.key("recipe", { id }),
      parse: (id, hash) => {
        const stored = parseDocumentHash(id, hash)
        return stored && { ...stored, line: hash["line"] ?? "" }
      },
      put: {
        script: putRecipe,
        check: (input: PutRecipe) => numberProblem("rank", input.rank),
        read: ["line"],
        call: (input: PutRecipe, write) => {
          const list = keys.key("recipeList", { scope: input.scope })
          if (list instanceof KeyPartError) return list
          const newLine = lineKey(input.scope, input.line)
          if (newLine instanceof KeyPartError) return newLine
          return ([storedLine]) => {
            const oldLine = storedLine ? lineKey(input.scope, storedLine) : write.key
            if (oldLine instanceof KeyPartError) return oldLine
            return {
              keys: { doc: write.key, list, newLine, oldLine, scopes: write.scopes, changes: write.changes },
              args: { ...write.args, doc: input.doc, line: input.line, storedLine: storedLine ?? "", rank: input.rank }
            }
          }
        }
      },
      delete: {
        script: deleteRecipe,
        read: ["line"],
        call: (_: DocumentDeleteInput, write, [line]) => {
          const list = keys.key("recipeList", { scope: write.args.scope })
          if (list instanceof KeyPartError) return list
          const byLine = lineKey(write.args.scope, line ?? "")
          if (byLine instanceof KeyPartError) return byLine
          return { keys: { doc: write.key, list, line: byLine, scopes: write.scopes, changes: write.changes }, args: { ...write.args, line: line ?? "" } }
        }
      },
      list: {
        key: (scope) => keys.key("recipeList", { scope }),
        read: (list, offset, count) => typedCommand(valkey, "list recipes", list, "zset", (c) => c.zrange(list, offset, offset + count - 1))
      }
    })

    const onLine = (scope: string, line: string) =>
      Effect.suspend(() => {
        const key = lineKey(scope, line) as string
        return typedCommand(valkey, "recipes on line", key, "set", (c) => c.smembers(key)).pipe(Effect.map((ids) => ids.sort()))
      })

    return { ...documents, onLine } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}

const prefix = randomPrefix()
const layer = RecipeDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

const doc = (value: unknown) => JSON.stringify(value)
const raw = <A>(run: (c: import("iovalkey").Redis) => Promise<A>) => Effect.flatMap(Valkey, (v) => unsafeCommand(v, "test", run))
const recipeKey = (id: string) => Effect.map(Valkey, (v) => `${v.keys.prefix}:recipe:${id}`)

/** Every key of the test's prefix with its type and content, to show that nothing changed. */
const snapshot = Effect.gen(function* () {
  const keys = (yield* raw((c) => c.keys(`${prefix}:*`))).sort()
  return yield* Effect.forEach(keys, (key) => raw((c) => c.dump(key)).pipe(Effect.map((dump) => [key, dump] as const)))
})

describe("makeDocumentDao: an extension's document type", () => {
  it.effect("puts, gets, lists, deletes and checks outcomes, with the store's typed errors", () =>
    Effect.gen(function* () {
      const recipes = yield* RecipeDao
      const first = yield* recipes.put({ id: "r1", scope: "s1", line: "A", rank: 2, doc: doc({ n: 1 }), expectedVersion: 0 })
      expect(first.version).toBe(1)
      expect(yield* recipes.get("r1")).toMatchObject({ id: "r1", scope: "s1", version: 1, op: first.op, doc: doc({ n: 1 }), line: "A" })

      const recreate = yield* Effect.flip(recipes.put({ id: "r1", scope: "s1", line: "A", rank: 2, doc: doc({}), expectedVersion: 0 }))
      expect(recreate).toMatchObject({ _tag: "VersionConflict", key: yield* recipeKey("r1"), expected: 0, actual: 1 })
      const move = yield* Effect.flip(recipes.put({ id: "r1", scope: "s2", line: "A", rank: 2, doc: doc({}), expectedVersion: -1 }))
      expect(move).toMatchObject({ _tag: "ScopeConflict", storedScope: "s1", requestedScope: "s2" })

      // The stored line is read, so the put moves the recipe from line A's set to line B's.
      const second = yield* recipes.put({ id: "r1", scope: "s1", line: "B", rank: 2, doc: doc({ n: 2 }), expectedVersion: 1, change: "Rework" })
      expect(second.version).toBe(2)
      expect(yield* recipes.onLine("s1", "A")).toEqual([])
      expect(yield* recipes.onLine("s1", "B")).toEqual(["r1"])

      yield* recipes.put({ id: "r2", scope: "s1", line: "A", rank: 1, doc: doc({}), expectedVersion: 0 })
      yield* recipes.put({ id: "r3", scope: "s1", line: "A", rank: 3, doc: doc({}), expectedVersion: 0 })
      expect(yield* recipes.list("s1", { count: 2 })).toEqual({ items: ["r2", "r1"], next: 2 })
      expect(yield* recipes.list("s1", { offset: 2, count: 2 })).toEqual({ items: ["r3"], next: null })
      expect((yield* recipes.getMany(["r3", "missing", "r1"])).map((r) => [r.id, r.line])).toEqual([["r3", "A"], ["r1", "B"]])

      // The first write is no longer the document's last: its change entry (kind "recipe") proves it landed.
      expect(yield* recipes.outcome("r1", first.op)).toEqual(Option.some(1))
      expect(yield* recipes.outcome("r1", "never-sent")).toEqual(Option.none())

      expect(yield* Effect.flip(recipes.delete({ id: "r1", expectedVersion: 1 }))).toMatchObject({ _tag: "VersionConflict", expected: 1, actual: 2 })
      expect((yield* recipes.delete({ id: "r1", expectedVersion: 2 })).version).toBe(2)
      expect(yield* recipes.onLine("s1", "B")).toEqual([])
      expect(yield* Effect.flip(recipes.get("r1"))).toMatchObject({ _tag: "NotFound", message: "recipe r1 does not exist" })
      expect((yield* Effect.flip(recipes.delete({ id: "r1" })))._tag).toBe("NotFound")
    }).pipe(Effect.provide(layer))
  )

  it.effect("bad input is InvalidInput naming the field, and nothing is written", () =>
    Effect.gen(function* () {
      const recipes = yield* RecipeDao
      yield* recipes.put({ id: "bad-base", scope: "s3", line: "A", rank: 1, doc: doc({}), expectedVersion: 0 })
      const good: PutRecipe = { id: "bad-1", scope: "s3", line: "A", rank: 1, doc: doc({}), expectedVersion: 0 }
      const before = yield* snapshot
      const refusals: ReadonlyArray<readonly [string, Effect.Effect<unknown, { readonly _tag: string }>]> = [
        ["id", recipes.put({ ...good, id: "" })],
        ["scope", recipes.put({ ...good, scope: "x".repeat(600) })],
        ["line", recipes.put({ ...good, line: "" })],
        ["rank", recipes.put({ ...good, rank: Number.NaN })],
        ["doc", recipes.put({ ...good, doc: "{not json" })],
        ["expectedVersion", recipes.put({ ...good, expectedVersion: -2 })],
        ["expectedVersion", recipes.delete({ id: "bad-base", expectedVersion: 1.5 })],
        ["id", recipes.get("")],
        ["id", recipes.getMany(["bad-base", ""])],
        ["id", recipes.outcome("", "op")],
        ["offset", recipes.list("s3", { offset: Number.NaN })],
        ["count", recipes.list("s3", { count: Number.POSITIVE_INFINITY })],
        ["offset", recipes.list("s3", { offset: 1e300 })]
      ]
      for (const [field, call] of refusals) expect(yield* Effect.flip(call), field).toMatchObject({ _tag: "InvalidInput", field })
      expect(yield* snapshot).toEqual(before)
    }).pipe(Effect.provide(layer))
  )

  it.effect("a key of another type is WrongType on every read, write and delete, and nothing changes", () =>
    Effect.gen(function* () {
      const recipes = yield* RecipeDao
      const key = yield* recipeKey("wt")
      yield* raw((c) => c.set(key, "planted"))
      const wrong = { _tag: "WrongType", key, expected: "hash", actual: "string" }
      expect(yield* Effect.flip(recipes.get("wt"))).toMatchObject(wrong)
      expect(yield* Effect.flip(recipes.getMany(["wt"]))).toMatchObject(wrong)
      expect(yield* Effect.flip(recipes.outcome("wt", "op"))).toMatchObject(wrong)
      expect(yield* Effect.flip(recipes.delete({ id: "wt" }))).toMatchObject(wrong)
      expect(yield* Effect.flip(recipes.put({ id: "wt", scope: "s4", line: "A", rank: 1, doc: "{}", expectedVersion: -1 }))).toMatchObject(wrong)
      const list = `${prefix}:recipe:list:s4`
      yield* raw((c) => c.set(list, "planted"))
      expect(yield* Effect.flip(recipes.list("s4"))).toMatchObject({ _tag: "WrongType", key: list, expected: "zset", actual: "string" })
      expect(yield* raw((c) => Promise.all([c.get(key), c.get(list)]))).toEqual(["planted", "planted"])
    }).pipe(Effect.provide(layer))
  )

  it.effect("a stored field that moves between the read and the script is read again; one that keeps moving is StateMoved", () =>
    Effect.gen(function* () {
      const recipes = yield* RecipeDao
      const valkey = yield* Valkey
      yield* recipes.put({ id: "mv", scope: "s5", line: "A", rank: 1, doc: doc({}), expectedVersion: 0 })
      const key = yield* recipeKey("mv")
      // Another writer moves the recipe to line `to` (document and set) right after the DAO's read.
      const moveTo = (to: string) =>
        unsafeCommand(valkey, "move", async (c) => {
          const from = await c.hget(key, "line")
          await c.hset(key, "line", to)
          await c.srem(`${prefix}:recipe:byline:s5:${from}`, "mv")
          await c.sadd(`${prefix}:recipe:byline:s5:${to}`, "mv")
        })
      const onceAfterRead = { afterRead: (read: string, attempt: number) => (read === key && attempt === 1 ? moveTo("C").pipe(Effect.orDie) : Effect.void) }
      const written = yield* recipes
        .put({ id: "mv", scope: "s5", line: "B", rank: 1, doc: doc({ n: 2 }), expectedVersion: -1 })
        .pipe(Effect.provideService(IndexReadHook, onceAfterRead))
      expect(written.version).toBe(2)
      expect([yield* recipes.onLine("s5", "A"), yield* recipes.onLine("s5", "B"), yield* recipes.onLine("s5", "C")]).toEqual([[], ["mv"], []])

      let n = 0
      const always = { afterRead: (read: string) => (read === key ? moveTo(`M${++n}`).pipe(Effect.orDie) : Effect.void) }
      const put = recipes.put({ id: "mv", scope: "s5", line: "B", rank: 1, doc: doc({ n: 3 }), expectedVersion: -1 })
      expect(yield* Effect.flip(put.pipe(Effect.provideService(IndexReadHook, always)))).toMatchObject({ _tag: "StateMoved", key, attempts: 5 })
      const removal = recipes.delete({ id: "mv" }).pipe(Effect.provideService(IndexReadHook, always))
      expect(yield* Effect.flip(removal)).toMatchObject({ _tag: "StateMoved", key, attempts: 5 })
      expect(yield* recipes.get("mv")).toMatchObject({ version: 2, doc: doc({ n: 2 }), line: "M10" })

      const deleted = yield* recipes.delete({ id: "mv" }).pipe(Effect.provideService(IndexReadHook, { afterRead: (read, attempt) => (read === key && attempt === 1 ? moveTo("D").pipe(Effect.orDie) : Effect.void) }))
      expect(deleted.version).toBe(2)
      expect(yield* recipes.onLine("s5", "D")).toEqual([])
    }).pipe(Effect.provide(layer))
  )
})
