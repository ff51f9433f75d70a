import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomPrefix } from "@microdcs/test-utils"
import { testValkey } from "@microdcs/testkit"
import { ExecutionLogStore, ValkeyStreams } from "@microdcs/store"
import { backgroundLogStorage, restartsCounter, StorageAvailability, type StorageState, storageDatabase } from "@microdcs/execution-log"
import { crashEmbeddedPostgresForTest } from "@microdcs/execution-log/testing"
import { countOf, execution, node, pendingIn, startRole, storedBytes, until, writeExecution } from "./LogKit.js"

/**
 * The embedded PostgreSQL's thread dies while the storage role runs (the test hook makes it throw
 * an uncaught error, or exit): the role waits as for any outage, the database is started again,
 * and the commits made meanwhile land.
 */

const TEST_TIMEOUT_MS = 150_000
const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "restart-pg-"))
  dirs.push(dir)
  return join(dir, "data")
}

/** The daemon's storage: the embedded database started (and supervised) in the background. */
const world = (prefix: string, dataDir: string) =>
  Layer.mergeAll(ExecutionLogStore.Default, ValkeyStreams.Default).pipe(
    Layer.provideMerge(testValkey({ prefix })),
    Layer.merge(backgroundLogStorage(storageDatabase(undefined, { dataDir })))
  )

/** The stored rows of `keys`, none while the database is away (until asks again). */
const storedNow = (keys: ReadonlyArray<string>) => Effect.orElseSucceed(storedBytes(keys), () => new Map<string, Buffer>())

const nodes = (count: number) => Array.from({ length: count }, (_, seq) => node(seq))
const state = Effect.flatMap(StorageAvailability, (a) => a.state)
const isAvailable = (s: StorageState) => s._tag === "Available"

/** Every reason of a wait the availability states from now on (polled every 5 ms, in the test's scope). */
const watchReasons = Effect.gen(function* () {
  const reasons = new Set<string>()
  const poll = Effect.tap(state, (s) => Effect.sync(() => void (s._tag === "Waiting" && reasons.add(s.reason))))
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(poll, Effect.sleep("5 millis"))))
  return reasons
})

/** Commits `count` executions to `scope` while the database is away; returns their keys. */
const commitSome = (scope: string, name: string, count: number) =>
  Effect.gen(function* () {
    const store = yield* ExecutionLogStore
    const keys: Array<string> = []
    for (let e = 0; e < count; e++) {
      const written = yield* writeExecution(execution(`${name}.e${e}`, 1), nodes(2))
      keys.push(...written)
      yield* store.commit(scope, written)
    }
    return keys
  })

/** Commits one execution and waits until it is stored. */
const commitAndWait = (scope: string, name: string) =>
  Effect.gen(function* () {
    const keys = yield* commitSome(scope, name, 1)
    yield* until(storedNow(keys), (rows) => rows.size === keys.length, { what: `${name} stored`, within: "60 seconds" })
    return keys
  })

const onDisk = freshDir()
layer(world(randomPrefix("restart"), onDisk), { timeout: 90_000, excludeTestServices: true })("a dead embedded PostgreSQL, data on disk", (it) => {
  it.effect(
    "its thread throws: the role waits (Waiting, the reason named), the database is started again on the same directory, and every commit lands",
    () =>
      Effect.gen(function* () {
        yield* startRole()
        yield* until(state, isAvailable, { what: "the database up", within: "60 seconds" })
        const before = yield* commitAndWait("line-1", "before")

        const reasons = yield* watchReasons
        const restartsBefore = yield* countOf(restartsCounter)
        expect(crashEmbeddedPostgresForTest("uncaught-error")).toBe(1)
        const during = yield* commitSome("line-1", "during", 3)

        yield* until(storedNow(during), (rows) => rows.size === during.length, { what: "the commits made meanwhile stored", within: "60 seconds" })
        // Readiness said why meanwhile, as for an outage of an external PostgreSQL.
        expect([...reasons].some((r) => r.includes("the embedded PostgreSQL's thread ended (exit code 1): the embedded PostgreSQL crashed on purpose"))).toBe(true)
        yield* until(pendingIn("line-1"), (n) => n === 0, { what: "every request acknowledged" })
        expect(yield* state).toEqual({ _tag: "Available" })
        expect((yield* countOf(restartsCounter)) - restartsBefore).toBe(1)
        // The directory kept what was committed before, and is locked by this process again.
        expect((yield* storedBytes(before)).size).toBe(before.length)
        expect(readFileSync(join(onDisk, "microdcs.lock"), "utf8").trim()).toBe(String(process.pid))
      }).pipe(Effect.scoped),
    TEST_TIMEOUT_MS
  )

  it.effect(
    "it dies again (its thread exits): started again once more",
    () =>
      Effect.gen(function* () {
        yield* startRole()
        yield* until(state, isAvailable, { what: "the database up", within: "60 seconds" })
        const reasons = yield* watchReasons
        expect(crashEmbeddedPostgresForTest("exit")).toBe(1)
        yield* commitAndWait("line-2", "again")
        expect([...reasons].some((r) => r.includes("the embedded PostgreSQL's thread ended (exit code 3)"))).toBe(true)
        expect(existsSync(join(onDisk, "microdcs.lock"))).toBe(true)
      }).pipe(Effect.scoped),
    TEST_TIMEOUT_MS
  )
})

layer(world(randomPrefix("restartmem"), "memory://"), { timeout: 90_000, excludeTestServices: true })("a dead embedded PostgreSQL in memory", (it) => {
  it.effect(
    "started again empty (the table made again): what it held is gone, the commits made meanwhile land",
    () =>
      Effect.gen(function* () {
        yield* startRole()
        yield* until(state, isAvailable, { what: "the database up", within: "60 seconds" })
        const before = yield* commitAndWait("line-1", "before")
        expect(crashEmbeddedPostgresForTest("uncaught-error")).toBe(1)
        const during = yield* commitSome("line-1", "during", 2)
        yield* until(storedNow(during), (rows) => rows.size === during.length, { what: "the commits made meanwhile stored", within: "60 seconds" })
        expect((yield* storedBytes(before)).size).toBe(0)
      }).pipe(Effect.scoped),
    TEST_TIMEOUT_MS
  )
})
