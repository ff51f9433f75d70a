import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import { inject } from "vitest"
import { defineKeyFamilies, KeyFamilyError } from "@microdcs/keyschema"
import { asArray, asText, decodeRepairReply, defineScript, scriptHeaderProblems } from "@microdcs/lua-scripts"
import { randomPrefix } from "@microdcs/test-utils"
import {
  coreIndexedFamilies,
  documentIndexedFamily,
  type Inconsistency,
  type IndexedFamily,
  IndexMaintenance,
  IndexRegistry,
  JobOrderDao,
  type RebuildProgress,
  Valkey,
  ValkeyLayer
} from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { IndexReadHook } from "@microdcs/store/testing"

// A sample extension: widgets, indexed by colour (a set) and by size (a sorted set), with its
// own key families and scripts, registered for index maintenance.
const widgetKeys = defineKeyFamilies({
  widget: "widget:{id}",
  widgetByColor: { template: "widget:bycolor:{scope}:{color}", parts: { color: { oneOf: ["red", "green", "blue"] } } },
  widgetBySize: "widget:bysize:{scope}"
})

const fixtures = new URL("./fixtures/widget/", import.meta.url)

const putWidget = defineScript({
  file: "put-widget-4.lua",
  dir: fixtures,
  keys: ["doc", "byColor", "bySize", "scopes"],
  encodeArgs: (a: { id: string; scope: string; color: string; size: number }) => [a.id, a.scope, a.color, a.size],
  decodeReply: (raw) => asText("put-widget", asArray("put-widget", raw)[0])
})

const repairWidget = defineScript({
  file: "repair-widget-3.lua",
  dir: fixtures,
  keys: ["doc", "byColor", "bySize"],
  encodeArgs: (a: { id: string; version: string; scope: string; size: string }) => [a.id, a.version, a.scope, a.size],
  decodeReply: decodeRepairReply("repair-widget")
})

const widgetIndexes = documentIndexedFamily({
  name: "widget",
  keyFamilies: widgetKeys,
  document: "widget",
  fields: ["color", "size"],
  indexes: {
    widgetByColor: { type: "set", belongsWhen: (parts) => [["scope", parts["scope"] ?? ""], ["color", parts["color"] ?? ""]] },
    widgetBySize: { type: "zset", belongsWhen: (parts) => [["scope", parts["scope"] ?? ""]] }
  },
  entriesOf: (widget) => [
    { index: "widgetByColor", parts: { scope: widget.scope, color: widget.fields["color"] ?? "" } },
    { index: "widgetBySize", parts: { scope: widget.scope }, score: Number(widget.fields["size"]) }
  ],
  repair: ({ valkey, document, entries }) =>
    valkey.script(
      repairWidget,
      { doc: document.key, byColor: entries[0]!.key, bySize: entries[1]!.key },
      { id: document.id, version: document.version, scope: document.scope, size: String(entries[1]!.score) }
    )
})

/** The extension's keys on the island's schema, as the extension's own DAO would hold them. */
const widgetSchema = Effect.map(Valkey, (valkey) => {
  const keys = valkey.keys.extend(widgetKeys)
  if (keys instanceof KeyFamilyError) throw new Error(keys.message)
  return keys
})

const byColor = (scope: string, color: "red" | "green" | "blue") =>
  Effect.map(widgetSchema, (keys) => keys.key("widgetByColor", { scope, color }) as string)
const bySize = (scope: string) => Effect.map(widgetSchema, (keys) => keys.key("widgetBySize", { scope }) as string)
const widgetKey = (id: string) => Effect.map(widgetSchema, (keys) => keys.key("widget", { id }) as string)

const put = (id: string, scope: string, color: "red" | "green" | "blue", size: number) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const keys = { doc: yield* widgetKey(id), byColor: yield* byColor(scope, color), bySize: yield* bySize(scope), scopes: yield* valkey.key("scopes", {}) }
    expect(yield* valkey.script(putWidget, keys, { id, scope, color, size })).toBe("ok")
  })

const raw = <A>(run: (c: import("iovalkey").Redis) => Promise<A>) => Effect.flatMap(Valkey, (v) => unsafeCommand(v, "test", run))

/** An island of its own, with the widget family registered after the core ones (unless told otherwise). */
const island = (registered: ReadonlyArray<IndexedFamily> = [widgetIndexes]) =>
  Layer.mergeAll(IndexMaintenance.Default.pipe(Layer.provide(IndexRegistry.with(...registered))), JobOrderDao.Default).pipe(
    Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("idxreg") }))
  )

const seed = Effect.gen(function* () {
  yield* (yield* JobOrderDao).put({ id: "jo1", scope: "s1", doc: JSON.stringify({ ID: "jo1" }), priority: 1, expectedVersion: 0 })
  yield* put("w1", "s1", "red", 3)
  yield* put("w2", "s1", "green", 5)
  yield* put("w3", "s2", "blue", 7)
})

/** Breaks every kind of widget index entry by hand; returns what the check must report. */
const breakWidgets = Effect.gen(function* () {
  const red = yield* byColor("s1", "red")
  const blue = yield* byColor("s1", "blue")
  const green = yield* byColor("s1", "green")
  const sizes = yield* bySize("s1")
  const scopes = yield* Effect.flatMap(Valkey, (v) => v.key("scopes", {}))
  yield* raw((c) => c.srem(red, "w1")) // a document missing from its set
  yield* raw((c) => c.sadd(blue, "w2")) // a member in a set it does not belong to
  yield* raw((c) => c.sadd(red, "ghost")) // a member without document
  yield* raw((c) => c.zadd(sizes, 99, "w2")) // a score other than the document implies
  yield* raw((c) => c.del(green).then(() => c.hset(green, "x", "1"))) // an index of the wrong type
  yield* raw((c) => c.srem(scopes, "s2")) // a scope with widgets, not registered
  const expected: Array<Partial<Inconsistency>> = [
    { kind: "document-missing-from-index", key: red, member: "w1", scope: "s1" },
    { kind: "stale-member", key: blue, member: "w2", scope: "s1" },
    { kind: "index-entry-without-document", key: red, member: "ghost", scope: "s1" },
    { kind: "wrong-score", key: sizes, member: "w2", expected: 5, found: 99 },
    { kind: "wrong-type", key: green, expected: "set", found: "hash" },
    { kind: "scope-not-registered", key: scopes, member: "s2", source: yield* widgetKey("w3") }
  ]
  return expected
})

const expectReports = (found: ReadonlyArray<Inconsistency>, expected: ReadonlyArray<Partial<Inconsistency>>) => {
  for (const e of expected) expect(found, JSON.stringify(e)).toContainEqual(expect.objectContaining(e))
}

describe("IndexRegistry", () => {
  it("holds the core families by default, in walk order", () => {
    expect(coreIndexedFamilies.map((f) => f.name)).toEqual(["scopes", "joborder", "joborder-search", "jobresponse", "jobresponse-failed", "workmaster", "references"])
    // The sample's scripts follow the rules of the core ones.
    expect([...scriptHeaderProblems(putWidget), ...scriptHeaderProblems(repairWidget)]).toEqual([])
  })

  it.effect("a registered family whose index is broken by hand is reported by check() and repaired by rebuild()", () =>
    Effect.gen(function* () {
      yield* seed
      const maintenance = yield* IndexMaintenance
      expect(maintenance.phases).toEqual(["scopes", "joborder", "joborder-search", "jobresponse", "jobresponse-failed", "workmaster", "references", "widget"])
      expect(yield* maintenance.check()).toEqual([])
      const expected = yield* breakWidgets

      const found = yield* maintenance.check()
      expectReports(found, expected)
      expect(found).toHaveLength(expected.length)

      const seen = yield* Ref.make<ReadonlyArray<RebuildProgress>>([])
      const summary = yield* maintenance.rebuild({ onProgress: (p) => Ref.update(seen, (all) => [...all, p]) })
      expect(summary.deletedKeys).toEqual([yield* byColor("s1", "green")])
      expect(summary.unrepaired).toEqual([])
      // w1 back in red, w2's score, w2 back in green (its set was deleted), the scope; ghost and w2 in blue removed.
      expect(summary).toMatchObject({ repaired: 4, removed: 2 })
      expect((yield* Ref.get(seen)).at(-1)?.phase).toBe("widget")
      expect(yield* maintenance.check()).toEqual([])

      const members = (key: string) => raw((c) => c.smembers(key)).pipe(Effect.map((m) => m.sort()))
      expect(yield* members(yield* byColor("s1", "red"))).toEqual(["w1"])
      expect(yield* members(yield* byColor("s1", "green"))).toEqual(["w2"])
      expect(yield* members(yield* byColor("s1", "blue"))).toEqual([])
      const sizes = yield* bySize("s1")
      expect(yield* raw((c) => c.zrange(sizes, 0, -1, "WITHSCORES"))).toEqual(["w1", "3", "w2", "5"])
      const scopes = yield* Effect.flatMap(Valkey, (v) => v.key("scopes", {}))
      expect(yield* raw((c) => c.sismember(scopes, "s2"))).toBe(1)
    }).pipe(Effect.provide(island()))
  )

  it.effect("without the registration the core families alone are walked: the widget breaks go unseen", () =>
    Effect.gen(function* () {
      yield* seed
      yield* breakWidgets
      const maintenance = yield* IndexMaintenance
      expect(maintenance.phases).toEqual(["scopes", "joborder", "joborder-search", "jobresponse", "jobresponse-failed", "workmaster", "references"])
      // Only the core side of the breaks: s2 holds nothing but widgets, so nothing core sees is wrong.
      expect(yield* maintenance.check()).toEqual([])
    }).pipe(Effect.provide(island([])))
  )

  it.effect("a scoped check and rebuild stay within their scope", () =>
    Effect.gen(function* () {
      yield* seed
      const expected = yield* breakWidgets
      const maintenance = yield* IndexMaintenance
      const s2 = yield* maintenance.check({ scope: "s2" })
      expect(s2).toEqual([expect.objectContaining({ kind: "scope-not-registered", member: "s2" })])
      yield* maintenance.rebuild({ scope: "s2" })
      expect(yield* maintenance.check({ scope: "s2" })).toEqual([])
      expectReports(yield* maintenance.check({ scope: "s1" }), expected.filter((e) => e.scope === "s1"))
      yield* maintenance.rebuild({ scope: "s1" })
      expect(yield* maintenance.check()).toEqual([])
    }).pipe(Effect.provide(island()))
  )

  it.effect("a widget that moves between the read and the repair is read again", () =>
    Effect.gen(function* () {
      yield* seed
      const red = yield* byColor("s1", "red")
      yield* raw((c) => c.srem(red, "w1"))
      const doc = yield* widgetKey("w1")
      const valkey = yield* Valkey
      const attempts: Array<number> = []
      const hook = {
        afterRead: (key: string, attempt: number) =>
          key !== doc
            ? Effect.void
            : Effect.sync(() => attempts.push(attempt)).pipe(
                // The first repair finds a widget of another version: its script replies retry.
                Effect.andThen(attempt === 1 ? unsafeCommand(valkey, "move", (c) => c.hincrby(doc, "v", 1)) : Effect.void),
                Effect.orDie,
                Effect.asVoid
              )
      }
      const maintenance = yield* IndexMaintenance
      const summary = yield* maintenance.rebuild().pipe(Effect.provideService(IndexReadHook, hook))
      expect(attempts).toEqual([1, 2])
      expect(summary).toMatchObject({ repaired: 1, removed: 0, unrepaired: [] })
      expect(yield* maintenance.check()).toEqual([])
    }).pipe(Effect.provide(island()))
  )

  it.effect("a widget whose fields form no key is reported as malformed and left alone", () =>
    Effect.gen(function* () {
      yield* seed
      const doc = yield* widgetKey("w-odd")
      yield* raw((c) => c.hset(doc, "v", "1", "scope", "s1", "color", "purple", "size", "1"))
      const maintenance = yield* IndexMaintenance
      const problem = expect.objectContaining({ kind: "malformed-document", key: doc, member: "w-odd" })
      expect(yield* maintenance.check()).toEqual([problem])
      const summary = yield* maintenance.rebuild()
      expect(summary).toMatchObject({ repaired: 0, removed: 0, deletedKeys: [], unrepaired: [problem] })
      expect(yield* raw((c) => c.hget(doc, "color"))).toBe("purple")
    }).pipe(Effect.provide(island()))
  )

  it.effect("a registry that cannot be walked is InvalidInput, and the rebuild changes nothing", () =>
    Effect.gen(function* () {
      yield* seed
      const red = yield* byColor("s1", "red")
      yield* raw((c) => c.srem(red, "w1"))
      const refused = (registry: Layer.Layer<never>) =>
        Effect.gen(function* () {
          const maintenance = yield* IndexMaintenance
          const checked = yield* Effect.flip(maintenance.check())
          const rebuilt = yield* Effect.flip(maintenance.rebuild())
          return [checked, rebuilt] as const
        }).pipe(Effect.provide(IndexMaintenance.Default.pipe(Layer.provide(registry))))
      const twice = yield* refused(IndexRegistry.with(widgetIndexes, widgetIndexes))
      expect(twice).toEqual([
        expect.objectContaining({ _tag: "InvalidInput", field: "indexedFamilies", message: "two indexed families are named 'widget'" }),
        expect.objectContaining({ _tag: "InvalidInput", field: "indexedFamilies" })
      ])
      const clashing = { ...widgetIndexes, name: "clash", keyFamilies: defineKeyFamilies({ jobOrder: "other:{id}" }) }
      const [clash] = yield* refused(IndexRegistry.with(clashing))
      expect(clash).toMatchObject({ _tag: "InvalidInput", field: "indexedFamilies" })
      expect(clash.message).toMatch(/indexed family 'clash'.*jobOrder/)
      expect(yield* raw((c) => c.sismember(red, "w1"))).toBe(0)
    }).pipe(Effect.provide(island()))
  )
})
