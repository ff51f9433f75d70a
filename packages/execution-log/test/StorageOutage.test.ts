import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, layer } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Context, Effect, Layer } from "effect"
import { randomPrefix } from "@microdcs/test-utils"
import { testValkey } from "@microdcs/testkit"
import { DeadLetterRedrive, EXECUTION_LOG_COMMIT_KIND, ExecutionLogStore, ValkeyStreams } from "@microdcs/store"
import {
  type EmbeddedPostgres,
  LOG_TABLE,
  LogStorage,
  logStorageLayer,
  StorageAvailability,
  storageAvailabilityLayer,
  storageDatabase,
  startEmbeddedPostgres
} from "@microdcs/execution-log"
import { execution, node, pendingIn, startRole, storedBytes, until, writeExecution } from "./LogKit.js"

const prefix = randomPrefix("outage")
const TEST_TIMEOUT_MS = 120_000

/** A PostgreSQL this file stops and starts again: PGlite on disk, served on the same port each time. */
interface StoppablePg {
  readonly url: string
  readonly stop: Effect.Effect<void>
  readonly start: Effect.Effect<void>
}
class TestPg extends Context.Service<TestPg, StoppablePg>()("test/StoppablePg") {}

const stoppablePg = Layer.effect(
  TestPg,
  Effect.gen(function* () {
    const dataDir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "outage-pg-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    let running: EmbeddedPostgres | undefined = yield* Effect.promise(() => startEmbeddedPostgres({ dataDir }))
    const { port, url } = running
    yield* Effect.addFinalizer(() => Effect.promise(async () => running?.stop()))
    const stop = Effect.promise(async () => {
      await running?.stop()
      running = undefined
    })
    const start = Effect.promise(async () => void (running ??= await startEmbeddedPostgres({ dataDir, port })))
    return { url, stop, start } satisfies StoppablePg
  })
)

/** The role's world over the stoppable PostgreSQL; `SqlClient` for what a test does past the role. */
const world = Layer.mergeAll(ExecutionLogStore.Default, ValkeyStreams.Default, DeadLetterRedrive.Default).pipe(
  Layer.provideMerge(testValkey({ prefix })),
  Layer.merge(logStorageLayer.pipe(Layer.provideMerge(Layer.unwrap(Effect.map(TestPg, (pg) => storageDatabase(pg.url)))))),
  Layer.merge(storageAvailabilityLayer()),
  Layer.provideMerge(stoppablePg)
)

const nodes = (count: number) => Array.from({ length: count }, (_, seq) => node(seq))

/** Commit requests dead-lettered in a scope. */
const deadLettersIn = (scope: string) =>
  Effect.gen(function* () {
    const streams = yield* ValkeyStreams
    return (yield* streams.lengths([yield* streams.deadLetterKey(EXECUTION_LOG_COMMIT_KIND, scope)]))[0] ?? 0
  })

layer(world, { timeout: 60_000, excludeTestServices: true })("the storage role and a PostgreSQL outage", (it) => {
  it.effect(
    "waits the outage out without spending delivery attempts, says so, and commits everything once PostgreSQL is back: nothing dead-lettered",
    () =>
      Effect.gen(function* () {
        const pg = yield* TestPg
        const store = yield* ExecutionLogStore
        const availability = yield* StorageAvailability
        // The quick settings: five deliveries, 20 ms doubling to 100 ms between them.
        yield* startRole()
        const before = yield* writeExecution(execution("before.e1", 1), nodes(2))
        yield* store.commit("line-1", before)
        yield* until(storedBytes(before), (rows) => rows.size === before.length, { what: "a commit before the outage" })

        yield* pg.stop
        const during: Array<string> = []
        for (let e = 0; e < 5; e++) {
          const keys = yield* writeExecution(execution(`during.e${e}`, 2), nodes(3))
          during.push(...keys)
          yield* store.commit("line-1", keys)
        }
        // Far longer than five deliveries at the quick back-off take (well under a second).
        yield* Effect.sleep("3 seconds")
        expect(yield* deadLettersIn("line-1")).toBe(0)
        const waiting = yield* availability.state
        expect(waiting).toMatchObject({ _tag: "Waiting" })

        yield* pg.start
        yield* until(storedBytes(during), (rows) => rows.size === during.length, { what: "every key of the outage stored", within: "30 seconds" })
        yield* until(pendingIn("line-1"), (n) => n === 0, { what: "every request acknowledged" })
        expect(yield* deadLettersIn("line-1")).toBe(0)
        expect(yield* availability.state).toEqual({ _tag: "Available" })
      }).pipe(Effect.scoped),
    TEST_TIMEOUT_MS
  )

  it.effect(
    "a refusal of the request itself (its table is gone) is no outage: tried, dead-lettered after its attempts, and committed once redriven",
    () =>
      Effect.gen(function* () {
        const store = yield* ExecutionLogStore
        const sql = yield* SqlClient.SqlClient
        yield* startRole()
        yield* sql`drop table ${sql(LOG_TABLE)}`
        const keys = yield* writeExecution(execution("refused.e1", 1), nodes(2))
        yield* store.commit("line-2", keys)
        yield* until(deadLettersIn("line-2"), (n) => n === 1, { what: "the request dead-lettered", within: "20 seconds" })
        expect(yield* Effect.flatMap(StorageAvailability, (a) => a.state)).toEqual({ _tag: "Available" })

        yield* Effect.flatMap(LogStorage, (s) => s.ensureTable)
        const redriven = yield* Effect.flatMap(DeadLetterRedrive, (r) => r.redriveAll(EXECUTION_LOG_COMMIT_KIND, "line-2"))
        expect(redriven.redriven).toBe(1)
        yield* until(storedBytes(keys), (rows) => rows.size === keys.length, { what: "the redriven request committed" })
      }).pipe(Effect.scoped),
    TEST_TIMEOUT_MS
  )
})
