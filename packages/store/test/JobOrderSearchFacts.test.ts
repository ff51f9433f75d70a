import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import fc from "fast-check"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { defineScript, putJobOrder, scriptKeys, sfcCompareAndSetMany } from "@microdcs/lua-scripts"
import { IndexMaintenance, JobOrderDao, SfcStateDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { cutUtf8, jobOrderSearchFacts } from "@microdcs/store/testing"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { manyWith } from "./SfcStateKit.js"

// The search facts a job order write passes (so the scripts need not decode the document) must
// be exactly what the scripts' own decode reads: the repair and the index check still decode.

const luaFacts = defineScript({
  file: "search-doc-facts-0.lua",
  dir: new URL("./fixtures/lua/", import.meta.url),
  keys: [],
  encodeArgs: (doc: string) => [doc],
  decodeReply: (raw) => {
    const [state, workMaster, error] = raw as ReadonlyArray<string>
    return { state, workMaster, error }
  }
})

const services = Layer.mergeAll(JobOrderDao.Default, SfcStateDao.Default, IndexMaintenance.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("facts") }))
)

const entry = (Text: unknown) => ({ StateText: { Text, Locale: "en" }, StateNumber: 1 })
const record = (state: ReadonlyArray<string>, o: { workMaster?: string | undefined; comment?: string | undefined } = {}) =>
  JSON.stringify({
    JobOrder: { JobOrderID: "jo", ...(o.workMaster !== undefined ? { WorkMasterID: [{ ID: o.workMaster }, { ID: "second" }] } : {}) },
    State: state.map(entry),
    ...(o.comment !== undefined ? { Comment: o.comment } : {})
  })

// Documents the script reads in every way: odd shapes, missing fields, long and multi-byte comments.
const shapes: ReadonlyArray<string> = [
  record(["Running"]),
  record(["Ended", "Completed"], { workMaster: "wm-a", comment: "ignored: not Aborted" }),
  record(["Aborted"], { workMaster: "wm-\u0000nul", comment: "short reason" }),
  record(["Aborted"], { comment: `${"x".repeat(499)}é tail` }),
  record(["Aborted"], { comment: `${"x".repeat(498)}€€` }),
  record(["Aborted"], { comment: `${"x".repeat(497)}😀😀` }),
  record(["Aborted"], { comment: "ü".repeat(400) }),
  record(["Aborted", "Sub"], { comment: "a compound Aborted has no error" }),
  record([""], { workMaster: "" }),
  JSON.stringify({ State: [entry("Running"), entry(5)], JobOrder: { WorkMasterID: { 1: { ID: "object, not a list" } } } }),
  JSON.stringify({ State: { 0: entry("Running") }, JobOrder: [{ WorkMasterID: [{ ID: "in a list" }] }] }),
  JSON.stringify({ State: [[entry("Running")]], JobOrder: { WorkMasterID: [[{ ID: "nested" }]] } }),
  JSON.stringify({ State: [{ StateText: [{ Text: "Running" }] }, entry("Sub")], JobOrder: { WorkMasterID: [{ ID: 7 }] } }),
  JSON.stringify({ State: [null, entry("Running")], Comment: 5 }),
  JSON.stringify({ State: [entry("Aborted")], Comment: null }),
  JSON.stringify([{ State: [entry("Running")] }]),
  JSON.stringify("Running"),
  "null",
  "{}"
]

describe("cutUtf8", () => {
  it("keeps at most 500 bytes, never cutting inside a character", () => {
    expect(cutUtf8("abc")).toBe("abc")
    expect(cutUtf8("é".repeat(260))).toBe("é".repeat(250))
    expect(cutUtf8(`x${"é".repeat(260)}`)).toBe(`x${"é".repeat(249)}`)
    expect(cutUtf8(`${"x".repeat(498)}😀`)).toBe("x".repeat(498))
    expect(Buffer.byteLength(cutUtf8("€".repeat(400)))).toBe(498)
  })
})

layer(services)("job order search facts", (it) => {
  it.effect("equal the scripts' own decode of the document, for every shape", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      for (const doc of shapes) expect(jobOrderSearchFacts(doc), doc).toEqual(yield* valkey.script(luaFacts, {}, doc))
      const text = fc.string({ unit: "binary", maxLength: 8 })
      const docs = fc.record({ state: fc.array(text, { maxLength: 2 }), workMaster: fc.option(text, { nil: undefined }), comment: fc.option(fc.string({ unit: "binary", maxLength: 300 }), { nil: undefined }), aborted: fc.boolean() })
      const samples = fc.sample(docs, { numRuns: 150, seed: 42 }).map((d) => record(d.aborted ? ["Aborted"] : d.state, d))
      for (const doc of samples) expect(jobOrderSearchFacts(doc), doc).toEqual(yield* valkey.script(luaFacts, {}, doc))
    })
  )

  it.effect("are left to the script for a text its decode refuses though JSON.parse reads it", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const loneSurrogate = record(["Aborted"], { workMaster: "wm", comment: "cut \ud800" })
      const deep = JSON.stringify({ State: [entry("Running")], deep: JSON.parse(`${"[".repeat(1001)}${"]".repeat(1001)}`) })
      for (const doc of [loneSurrogate, deep]) {
        expect(jobOrderSearchFacts(doc)).toBeUndefined()
        expect(yield* valkey.script(luaFacts, {}, doc)).toEqual({ state: "", workMaster: "", error: "" })
      }
      // Other escapes (JSON.stringify writes control characters as \u00XX) read the same in both.
      const control = record(["Aborted"], { comment: "bell \u0007" })
      expect(jobOrderSearchFacts(control)).toEqual({ state: "Aborted", workMaster: "", error: "bell \u0007" })
      expect(yield* valkey.script(luaFacts, {}, control)).toEqual(jobOrderSearchFacts(control))
    })
  )

  it.effect("a put, a create marking done and an engine move whose facts change leave what a rebuild would", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      const sfc = yield* SfcStateDao
      const maintenance = yield* IndexMaintenance
      const valkey = yield* Valkey
      const searchKey = yield* valkey.key("jobOrderSearch", { scope: "facts" })
      const members = unsafeCommand(valkey, "test", (c) => c.zrange(searchKey, 0, -1))
      const consistent = Effect.gen(function* () {
        const written = yield* members
        expect((yield* maintenance.check({ scope: "facts" })).filter((i) => i.key === searchKey)).toEqual([])
        yield* maintenance.rebuild({ scope: "facts" })
        expect((yield* members).sort()).toEqual([...written].sort())
      })
      const put = (doc: string) => dao.put({ id: "jo-f", scope: "facts", doc, priority: 2, expectedVersion: -1 })
      yield* put(record(["AllowedToStart", "Ready"], { workMaster: "wm-a" }))
      yield* consistent
      yield* put(record(["Running"], { workMaster: "wm-b" }))
      yield* consistent
      const reason = `Störung ${"😀ü€".repeat(60)}`
      yield* put(record(["Aborted"], { workMaster: "wm-c", comment: reason }))
      yield* consistent
      const stored = yield* dao.get("jo-f")
      const moved = record(["Aborted"], { workMaster: "wm-d", comment: `${reason} again` })
      const jobOrderMove = { scope: "facts", expectedVersion: stored.version, doc: moved, priority: 4, change: "Abort", op: "op-move" }
      const [result] = yield* sfc.compareAndSetMany([manyWith("jo-f", "facts", 0, JSON.stringify({ status: "aborted" }), { jobOrderMove })])
      expect(Result.getOrThrow(result!)).toMatchObject({ jobOrderVersion: stored.version + 1 })
      yield* consistent
      yield* put(record(["Running"]))
      yield* consistent
      expect((yield* members).some((m) => m.startsWith("r\u0000"))).toBe(false)
    })
  )

  it.effect("the scripts index the facts passed, and refuse facts that cannot be right before any write", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const key = (family: "jobOrder" | "jobOrderSearch", parts: Record<string, string>) => valkey.key(family as "jobOrder", parts as { id: string })
      const doc = yield* key("jobOrder", { id: "jo-raw" })
      const search = yield* key("jobOrderSearch", { scope: "raw" })
      const keys = { doc, list: `${doc}:l`, scopes: `${doc}:s`, changes: `${doc}:c`, search, responses: `${doc}:r`, failed: `${doc}:f` }
      const args = { expectedVersion: -1, scope: "raw", id: "jo-raw", priority: 1, doc: record(["Running"], { workMaster: "wm-doc" }), op: "op", change: "put", nudgeChannel: "n", limit: 0, retainMs: 0, origin: "" }
      const run = (facts: Record<string, string> | undefined, extra: ReadonlyArray<string> = []) =>
        unsafeCommand(valkey, "test", (c) =>
          c.eval(putJobOrder.source, 7, ...Object.values(keys), ...putJobOrder.encodeArgs({ ...args, facts: facts as never }), ...extra).then((r) => r, (e: Error) => e.message)
        )
      expect(yield* run({ state: "Running", workMaster: "", error: "why" })).toContain("an error is only for state Aborted")
      expect(yield* run({ state: "Aborted", workMaster: "", error: "x".repeat(501) })).toContain("over 500 bytes")
      expect(yield* run(undefined, ["Running", "wm"])).toContain("malformed arguments")
      const move = { keys: { doc, list: keys.list, scopes: keys.scopes, changes: keys.changes, search }, expectedVersion: 1, scope: "raw", id: "jo-raw", priority: 1,
        doc: args.doc, op: "op", change: "Run", origin: "", changesChannel: "n", facts: { state: "Running", workMaster: "", error: "why" } }
      const job = { keys: { state: `${doc}:st`, work: `${doc}:w`, due: `${doc}:d`, active: `${doc}:a` }, expectedVersion: 0, scope: "raw", jobId: "jo-raw", op: "op", doc: "{}",
        due: null, active: false, nudge: false, events: [], waitsJoin: [], waitsLeave: [], entries: [], jobOrderMove: move }
      const many = { nudgeChannel: "", eventLifetimeMs: 1000, jobs: [job] }
      const refused = yield* unsafeCommand(valkey, "test", (c) =>
        c.eval(sfcCompareAndSetMany.source, scriptKeys(sfcCompareAndSetMany, {}, many).length, ...scriptKeys(sfcCompareAndSetMany, {}, many), ...sfcCompareAndSetMany.encodeArgs(many)).then((r) => r, (e: Error) => e.message)
      )
      expect(refused).toContain("move search facts")
      expect(yield* unsafeCommand(valkey, "test", (c) => c.exists(doc, search, job.keys.state))).toBe(0)
      // The facts passed are what the index holds: the script no longer reads them from the doc.
      expect(yield* run({ state: "Running", workMaster: "wm-passed", error: "" })).toEqual(["ok", 1])
      const members = yield* unsafeCommand(valkey, "test", (c) => c.zrange(search, 0, -1))
      expect(members.filter((m) => m.startsWith("w\u0000")).map((m) => m.split("\u0000")[1])).toEqual(["wm-passed"])
    })
  )
})
