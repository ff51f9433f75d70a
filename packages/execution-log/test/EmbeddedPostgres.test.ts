import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import { type EmbeddedPostgres, LogStorage, logStorageLayer, startEmbeddedPostgres, storageDatabase } from "@microdcs/execution-log"

/** The embedded PostgreSQL: on a thread of its own, its data on disk when given a directory, one process per directory. */

const dirs: Array<string> = []
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "embedded-pg-"))
  dirs.push(dir)
  return join(dir, "data")
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** The longest time between two turns of this thread's event loop, from now until `stop`. */
const watchEventLoop = () => {
  let last = performance.now()
  let longest = 0
  const timer = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
  }, 5)
  return {
    stop: () => {
      clearInterval(timer)
      return Math.max(longest, performance.now() - last)
    }
  }
}

/** Runs a query on the database at `pg`. */
const withSql = <A>(pg: EmbeddedPostgres, query: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(Effect.scoped(Effect.provide(Effect.flatMap(SqlClient.SqlClient, query), storageDatabase(pg.url))))

/** Runs `effect` against the table of the database at `pg`. */
const withStorage = <A, E>(pg: EmbeddedPostgres, effect: Effect.Effect<A, E, LogStorage>) =>
  Effect.runPromise(Effect.scoped(Effect.provide(effect, logStorageLayer.pipe(Layer.provide(storageDatabase(pg.url)))) as Effect.Effect<A, unknown>))

describe("the embedded PostgreSQL", () => {
  it("runs on a thread of its own: the caller's event loop keeps turning while PGlite starts and while it runs a long query", async () => {
    const stalls = watchEventLoop()
    const pg = await startEmbeddedPostgres({ dataDir: freshDir() })
    try {
      const started = performance.now()
      // Seconds of work inside PGlite, which runs a query synchronously in WebAssembly: on this
      // thread it would stall the loop for all of it.
      const sum = await withSql(pg, (sql) => sql<{ total: string }>`select sum(i)::text as total from generate_series(1, 3000000) i`)
      const tookMs = performance.now() - started
      const longestMs = stalls.stop()
      expect(sum).toEqual([{ total: "4500001500000" }])
      // On this thread the longest stall would be the whole query; half of it leaves room for a
      // loaded machine's scheduling (a quarter was seen exceeded under a load average of 14 on 2 cores).
      expect(longestMs, `longest stall ${Math.round(longestMs)} ms, the query took ${Math.round(tookMs)} ms`).toBeLessThan(tookMs / 2)
    } finally {
      stalls.stop()
      await pg.stop()
    }
  }, 120_000)

  it("keeps its data in the directory it is given: a second start finds the rows of the first", async () => {
    const dataDir = freshDir()
    const first = await startEmbeddedPostgres({ dataDir })
    const row = { key: "kept:dag:log:e1:exec", value: new Uint8Array([1, 2, 3]) }
    await withStorage(first, Effect.flatMap(LogStorage, (s) => s.upsert([row]))).finally(() => first.stop())
    const second = await startEmbeddedPostgres({ dataDir })
    try {
      const rows = await withStorage(second, Effect.flatMap(LogStorage, (s) => s.readKeys([row.key])))
      expect(rows.map((r) => [r.key, [...r.value]])).toEqual([[row.key, [1, 2, 3]]])
    } finally {
      await second.stop()
    }
  }, 120_000)

  it("locks its directory: a second database on it is refused naming the holder; a lock left by a process that is gone is taken over", async () => {
    const dataDir = freshDir()
    const first = await startEmbeddedPostgres({ dataDir })
    try {
      await expect(startEmbeddedPostgres({ dataDir })).rejects.toThrow(`in use by process ${process.pid}`)
    } finally {
      await first.stop()
    }
    expect(existsSync(join(dataDir, "microdcs.lock"))).toBe(false)
    // A pid no process has (above the kernel's pid_max): the lock of a process killed with SIGKILL.
    writeFileSync(join(dataDir, "microdcs.lock"), "2147483647\n")
    const after = await startEmbeddedPostgres({ dataDir })
    await after.stop()
  }, 120_000)
})
