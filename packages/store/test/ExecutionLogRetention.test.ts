import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix, startValkeyServer } from "@microdcs/test-utils"
import { ExecutionLogStore, executionText, nodeText, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

// Issue 21: retention of the execution log cost one round trip per execution removed (a GET of
// its record), inside the log writer's 5 s batch budget. On a loaded server a few hundred of them
// took seconds, the batch was dropped, and the next retention had more to remove. It now costs two
// round trips per 1000 executions. Counted on a server of this file's own, where nothing else runs.

const EXECUTIONS = 2500
const CAP = 100
const NODES = 4

const execution = (executionId: string, openedAt: number) =>
  executionText({ v: 1, executionId, jobId: executionId, scope: "s", workMasterId: "wm", recipeDigest: "d", openedAt, closedAt: openedAt, status: "completed", lastSeq: NODES - 1 })

const node = (seq: number) => nodeText({ v: 1, seq, kind: "step", name: "S", openedAt: 0, closedAt: 0 })

/** The server's call counts by command since its last CONFIG RESETSTAT (`INFO commandstats`). */
const callsByCommand = Effect.flatMap(Valkey, (valkey) =>
  Effect.map(unsafeCommand(valkey, "info", (c) => c.info("commandstats")), (text) =>
    Object.fromEntries([...text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]))
  )
)

/** Writes `count` closed executions of `NODES` nodes, opened at 0, 1, 2, ... (ids `e{n}`). */
const writeExecutions = (count: number) =>
  Effect.gen(function* () {
    const log = yield* ExecutionLogStore
    const ids = Array.from({ length: count }, (_, i) => `e${i}`)
    const values = yield* Effect.forEach(ids, (id, i) =>
      Effect.gen(function* () {
        const nodes = yield* Effect.forEach(Array.from({ length: NODES }, (_, seq) => seq), (seq) => Effect.map(log.nodeKey(id, seq), (key) => ({ key, value: node(seq) })))
        return [{ key: yield* log.execKey(id), value: execution(id, i) }, ...nodes]
      })
    )
    yield* log.write(values.flat(), ids.map((executionId, i) => ({ executionId, openedAt: i })))
    return ids
  })

describe("execution log retention", () => {
  it.live("removes thousands of executions with two round trips per 1000, never one per execution", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(Effect.promise(() => startValkeyServer()), (s) => Effect.promise(() => s.stop()))
      yield* Effect.gen(function* () {
        const log = yield* ExecutionLogStore
        const valkey = yield* Valkey
        const ids = yield* writeExecutions(EXECUTIONS)
        yield* unsafeCommand(valkey, "reset stats", (c) => c.config("RESETSTAT"))
        expect(yield* log.retain(CAP)).toEqual(ids.slice(0, EXECUTIONS - CAP))
        const calls = yield* callsByCommand
        // Steps of 1000 executions: one MGET of their records, one pipeline of an UNLINK per 1000 keys.
        const steps = Array.from({ length: Math.ceil((EXECUTIONS - CAP) / 1000) }, (_, i) => Math.min(1000, EXECUTIONS - CAP - i * 1000))
        expect(calls["get"] ?? 0).toBe(0)
        expect(calls["mget"]).toBe(steps.length)
        expect(calls["unlink"]).toBe(steps.reduce((n, size) => n + Math.ceil((size * (NODES + 1)) / 1000), 0))
        // What is left is the newest CAP executions, whole; the rest is gone, nodes included.
        expect(yield* log.oldestBeyond(0)).toEqual(ids.slice(EXECUTIONS - CAP))
        expect(yield* log.readValues([yield* log.execKey("e0"), yield* log.nodeKey("e0", NODES - 1)])).toEqual([undefined, undefined])
        expect((yield* log.readNodes(`e${EXECUTIONS - 1}`, 0, NODES)).length).toBe(NODES)
      }).pipe(Effect.provide(ExecutionLogStore.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: server.url, prefix: randomPrefix("retain") })))))
    }).pipe(Effect.scoped)
  )

  it.live("an execution whose record is no string loses its key and place; the others are removed whole", () =>
    Effect.gen(function* () {
      const log = yield* ExecutionLogStore
      const valkey = yield* Valkey
      const ids = yield* writeExecutions(3)
      const broken = yield* log.execKey("e0")
      yield* unsafeCommand(valkey, "replace", (c) => c.multi().del(broken).hset(broken, "x", "1").exec())
      expect(yield* log.retain(0)).toEqual(ids)
      expect(yield* log.readValues([broken, yield* log.execKey("e1"), yield* log.nodeKey("e2", 0)])).toEqual([undefined, undefined, undefined])
      expect(yield* unsafeCommand(valkey, "exists", (c) => c.exists(broken))).toBe(0)
      // e0's nodes cannot be counted without its record: they stay, as for a record that does not decode.
      expect((yield* log.readNodes("e0", 0, NODES)).length).toBe(NODES)
    }).pipe(Effect.provide(ExecutionLogStore.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("retain") })))))
  )
})
