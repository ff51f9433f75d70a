import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { ExecutionLogStore, InvalidInput, Valkey, ValkeyLayer, WrongType } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

// Issue 13: the execution log's keys in Valkey; values are bytes the store never re-encodes.

const prefix = randomPrefix("execlog")
const layer = ExecutionLogStore.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))
const bytes = (text: string) => new TextEncoder().encode(text)

describe("ExecutionLogStore", () => {
  it.live("builds padded node keys, parses only this island's exec and node keys", () =>
    Effect.gen(function* () {
      const log = yield* ExecutionLogStore
      expect(log.logPrefix).toBe(`${prefix}:dag:log:`)
      const key = yield* log.nodeKey("e1.b1.p2.1", 9)
      expect(key).toBe(`${prefix}:dag:log:e1.b1.p2.1:n:000009`)
      expect(log.parseKey(key)).toEqual({ kind: "node", executionId: "e1.b1.p2.1", seq: 9 })
      expect(log.parseKey(yield* log.execKey("e:1"))).toEqual({ kind: "exec", executionId: "e:1" })
      expect(yield* log.executionKeyPrefix("e:1")).toBe(`${prefix}:dag:log:e%3A1:`)
      for (const foreign of [`other:dag:log:e1:exec`, `${prefix}:dag:log:executions`, `${prefix}:dag:commits:s`, `${prefix}:joborder:x`, `${prefix}:dag:log:e1:n:9`]) {
        expect(log.parseKey(foreign)).toBeUndefined()
      }
      expect(yield* Effect.exit(log.nodeKey("e1", 1_000_000))).toMatchObject({ _tag: "Failure", cause: { reasons: [{ _tag: "Fail", error: { _tag: "InvalidInput", field: "seq" } }] } })
    }).pipe(Effect.provide(layer))
  )

  it.live("writes and reads bytes unchanged, nodes in sequence order, and removes executions", () =>
    Effect.gen(function* () {
      const log = yield* ExecutionLogStore
      const raw = new Uint8Array([0, 0xff, 0x80, 10])
      const exec = yield* log.execKey("w1")
      const nodes = yield* Effect.forEach([0, 1, 2], (seq) => log.nodeKey("w1", seq))
      yield* log.write([{ key: exec, value: raw }, ...nodes.map((key, i) => ({ key, value: bytes(`n${i}`) }))], [{ executionId: "w1", openedAt: 1 }])
      expect(Option.map(yield* log.readExec("w1"), (b) => [...b])).toEqual(Option.some([...raw]))
      expect((yield* log.readNodes("w1", 0, 5)).map((n) => [n.seq, Buffer.from(n.value).toString()])).toEqual([[0, "n0"], [1, "n1"], [2, "n2"]])
      expect(yield* log.oldestBeyond(0)).toEqual(["w1"])
      yield* log.remove([{ executionId: "w1", lastSeq: 2 }])
      expect(yield* log.readValues([exec, ...nodes])).toEqual([undefined, undefined, undefined, undefined])
      expect(yield* log.oldestBeyond(0)).toEqual([])
    }).pipe(Effect.provide(layer))
  )

  it.live("a write lists each execution it names; one listed before keeps its open time", () =>
    Effect.gen(function* () {
      const log = yield* ExecutionLogStore
      const valkey = yield* Valkey
      const exec = yield* log.execKey("l1")
      const list = yield* valkey.key("executionLogExecutions", {})
      yield* log.write([{ key: exec, value: bytes("opened") }], [{ executionId: "l1", openedAt: 5 }])
      // The engine's writer names every execution whose record it writes, again on each rewrite.
      yield* log.write([{ key: exec, value: bytes("rewritten") }], [{ executionId: "l1", openedAt: 9 }])
      expect(yield* unsafeCommand(valkey, "zscore", (c) => c.zscore(list, "l1"))).toBe("5")
      expect(Option.map(yield* log.readExec("l1"), (b) => b.toString())).toEqual(Option.some("rewritten"))
    }).pipe(Effect.provide(layer))
  )

  it.live("refuses to write a key outside the log and a commit of no key, writing nothing", () =>
    Effect.gen(function* () {
      const log = yield* ExecutionLogStore
      const valkey = yield* Valkey
      const good = yield* log.execKey("r1")
      const foreign = yield* valkey.key("jobOrder", { id: "r1" })
      expect(yield* Effect.exit(log.write([{ key: good, value: bytes("{}") }, { key: foreign, value: bytes("{}") }]))).toEqual(
        Exit.fail(new InvalidInput({ field: "key", message: `'${foreign}' is no execution log key` }))
      )
      expect(yield* log.readValues([good, foreign])).toEqual([undefined, undefined])
      // A node key of the wrong width (five digits) is no log key either, however close.
      const unpadded = `${yield* log.executionKeyPrefix("r1")}n:00001`
      expect(yield* Effect.exit(log.write([{ key: good, value: bytes("{}") }, { key: unpadded, value: bytes("{}") }]))).toEqual(
        Exit.fail(new InvalidInput({ field: "key", message: `'${unpadded}' is no execution log key` }))
      )
      expect(yield* log.readValues([good])).toEqual([undefined])
      expect(yield* Effect.exit(log.commit("s", []))).toMatchObject({ _tag: "Failure", cause: { reasons: [{ _tag: "Fail", error: { _tag: "InvalidInput", field: "keys" } }] } })
      const stream = yield* valkey.key("executionLogCommits", { scope: "s" })
      expect(yield* unsafeCommand(valkey, "exists", (c) => c.exists(stream))).toBe(0)
    }).pipe(Effect.provide(layer))
  )

  it.live("a commit request holds the keys only, registers the scope and lands in dag:commits:{scope}", () =>
    Effect.gen(function* () {
      const log = yield* ExecutionLogStore
      const valkey = yield* Valkey
      const keys = [yield* log.execKey("c1"), yield* log.nodeKey("c1", 0)]
      const id = yield* log.commit("line-9", keys)
      const stream = yield* valkey.key("executionLogCommits", { scope: "line-9" })
      expect(yield* unsafeCommand(valkey, "xrange", (c) => c.xrange(stream, "-", "+"))).toEqual([[id, ["keys", JSON.stringify(keys)]]])
      expect(yield* unsafeCommand(valkey, "sismember", (c) => c.sismember(`${prefix}:scopes`, "line-9"))).toBe(1)
    }).pipe(Effect.provide(layer))
  )
})

describe("ExecutionLogStore on a corrupted key", () => {
  it.live("a commit stream of another type is WrongType, not a defect", () =>
    Effect.gen(function* () {
      const log = yield* ExecutionLogStore
      const valkey = yield* Valkey
      const stream = yield* valkey.key("executionLogCommits", { scope: "broken" })
      yield* unsafeCommand(valkey, "set", (c) => c.set(stream, "x"))
      expect(yield* Effect.exit(log.commit("broken", [yield* log.execKey("e")]))).toEqual(
        Exit.fail(new WrongType({ key: stream, expected: "stream", actual: "string" }))
      )
    }).pipe(Effect.provide(layer))
  )
})
