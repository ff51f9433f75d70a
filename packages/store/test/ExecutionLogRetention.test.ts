import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { inject } from "vitest"
import { randomPrefix, startValkeyServer } from "@microdcs/test-utils"
import { ExecutionLogStore, executionText, nodeText, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

// Issue 21: retention of the execution log cost one round trip per execution removed (a GET of
// its record), inside the log writer's 5 s batch budget. On a loaded server a few hundred of them
// took seconds, the batch was dropped, and the next retention had more to remove. It now costs two
// round trips per 1000 executions. Counted on a server of this file's own, where nothing else runs.
//
// Retention removed the oldest executions beyond the cap whether they ran or not: with more running
// executions than the cap it cut the logs of running jobs, and their next record write recreated a
// key outside `dag:log:executions` that no retention removed again. A running execution now stays.

const EXECUTIONS = 2500
const CAP = 100
const NODES = 4

const execution = (executionId: string, openedAt: number, running = false) =>
  executionText({
    v: 1, executionId, jobId: executionId, scope: "s", workMasterId: "wm", recipeDigest: "d", openedAt,
    ...(running ? { status: "running" } : { closedAt: openedAt, status: "completed" }), lastSeq: NODES - 1
  })

const node = (seq: number) => nodeText({ v: 1, seq, kind: "step", name: "S", openedAt: 0, closedAt: 0 })

/** The server's call counts by command since its last CONFIG RESETSTAT (`INFO commandstats`). */
const callsByCommand = Effect.flatMap(Valkey, (valkey) =>
  Effect.map(unsafeCommand(valkey, "info", (c) => c.info("commandstats")), (text) =>
    Object.fromEntries([...text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]))
  )
)

/**
 * Writes `count` executions of `NODES` nodes, opened at 0, 1, 2, ... (ids `e{n}`), listed in
 * `dag:log:executions`; those `running(n)` names are running, the others closed.
 */
const writeExecutions = (count: number, running: (n: number) => boolean = () => false) =>
  Effect.gen(function* () {
    const log = yield* ExecutionLogStore
    const ids = Array.from({ length: count }, (_, i) => `e${i}`)
    const values = yield* Effect.forEach(ids, (id, i) =>
      Effect.gen(function* () {
        const nodes = yield* Effect.forEach(Array.from({ length: NODES }, (_, seq) => seq), (seq) => Effect.map(log.nodeKey(id, seq), (key) => ({ key, value: node(seq) })))
        return [{ key: yield* log.execKey(id), value: execution(id, i, running(i)) }, ...nodes]
      })
    )
    yield* log.write(values.flat(), ids.map((executionId, i) => ({ executionId, openedAt: i })))
    return ids
  })

/** Rewrites the records of executions `e{n}` as closed, listing none: as a writer rewrites a record it registered before. */
const closeExecutions = (ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const log = yield* ExecutionLogStore
    yield* log.write(yield* Effect.forEach(ids, (id) => Effect.map(log.execKey(id), (key) => ({ key, value: execution(id, Number(id.slice(1))) }))))
  })

/** Whether each of `ids` has its record and every node in Valkey. */
const whole = (ids: ReadonlyArray<string>) =>
  Effect.flatMap(ExecutionLogStore, (log) =>
    Effect.forEach(ids, (id) =>
      Effect.map(Effect.zip(log.readExec(id), log.readNodes(id, 0, NODES)), ([record, nodes]) => Option.isSome(record) && nodes.length === NODES)
    )
  )

/** The log's store on the server at `url`, under a prefix of its own. */
const logLayer = (url: string) => ExecutionLogStore.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url, prefix: randomPrefix("retain") })))

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
      }).pipe(Effect.provide(logLayer(server.url)))
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
    }).pipe(Effect.provide(logLayer(inject("valkeyUrl"))))
  )

  it.live("more running executions than the cap: the closed ones beyond it go, none that runs", () =>
    Effect.gen(function* () {
      const log = yield* ExecutionLogStore
      // Ten executions, seven of them running; the cap is five.
      const closed = new Set([0, 3, 7])
      const ids = yield* writeExecutions(10, (n) => !closed.has(n))
      const running = ids.filter((_, n) => !closed.has(n))
      expect(yield* log.retain(5)).toEqual(["e0", "e3", "e7"])
      // The cap is exceeded by the running ones: their logs are in use.
      expect(yield* log.oldestBeyond(0)).toEqual(running)
      expect(yield* whole(running)).toEqual(running.map(() => true))
      expect(yield* whole(["e0", "e3", "e7"])).toEqual([false, false, false])
      expect(yield* log.readValues([yield* log.nodeKey("e0", 0), yield* log.nodeKey("e7", NODES - 1)])).toEqual([undefined, undefined])
    }).pipe(Effect.provide(logLayer(inject("valkeyUrl"))))
  )

  it.live("once the running ones closed, a later run brings the count back to the cap; no record is ever outside the list", () =>
    Effect.gen(function* () {
      const log = yield* ExecutionLogStore
      const ids = yield* writeExecutions(8, () => true)
      expect(yield* log.retain(3)).toEqual([])
      // The writer rewrites each record on every node and at close: every record it writes is listed.
      yield* closeExecutions(ids)
      expect(yield* log.oldestBeyond(0)).toEqual(ids)
      expect(yield* log.retain(3)).toEqual(ids.slice(0, 5))
      expect(yield* log.oldestBeyond(0)).toEqual(ids.slice(5))
      expect(yield* whole(ids)).toEqual([false, false, false, false, false, true, true, true])
    }).pipe(Effect.provide(logLayer(inject("valkeyUrl"))))
  )

  it.live("a run crowded with running executions reads their records in pages of up to 1000, never one per execution", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(Effect.promise(() => startValkeyServer()), (s) => Effect.promise(() => s.stop()))
      yield* Effect.gen(function* () {
        const log = yield* ExecutionLogStore
        // 2500 running executions, then 10 closed ones; the cap is 100.
        const ids = yield* writeExecutions(EXECUTIONS + 10, (n) => n < EXECUTIONS)
        yield* unsafeCommand(yield* Valkey, "reset stats", (c) => c.config("RESETSTAT"))
        expect(yield* log.retain(CAP)).toEqual(ids.slice(EXECUTIONS))
        const calls = yield* callsByCommand
        expect(calls["get"] ?? 0).toBe(0)
        // Pages grow with the running ones passed: at most one more than 1000 records each.
        expect(calls["mget"]).toBeLessThanOrEqual(Math.ceil((EXECUTIONS + 10) / 1000) + 1)
        expect(yield* log.oldestBeyond(0)).toEqual(ids.slice(0, EXECUTIONS))
      }).pipe(Effect.provide(logLayer(server.url)))
    }).pipe(Effect.scoped)
  )
})
