import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { expect, layer } from "@effect/vitest"
import { Effect, Metric, Queue } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { ExecutionLogStore, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { committedCounter, encodeExecution, LogStorage, refusedCounter } from "@microdcs/execution-log"
import { countOf, execution, logWorld, node, pendingIn, quick, startRole, storedBytes, TestPg, until, valkeyBytes, writeExecution } from "./LogKit.js"

const ROOT = fileURLToPath(new URL("../../../", import.meta.url))
/** Generous: the whole suite shares two cores, and the SIGKILL test starts a process under tsx. */
const TEST_TIMEOUT_MS = 90_000
const prefix = randomPrefix("execlog")

const nodes = (count: number) => Array.from({ length: count }, (_, seq) => node(seq))

layer(logWorld(prefix), { timeout: 60_000, excludeTestServices: true })("the storage role", (it) => {
  it.effect("copies committed keys into PostgreSQL with the bytes unchanged, and reads a prefix range in node order", () =>
    Effect.gen(function* () {
      const store = yield* ExecutionLogStore
      const storage = yield* LogStorage
      const keys = yield* writeExecution(execution("range.e1", 11), nodes(12))
      // A child execution's keys sort next to the parent's but are outside its range.
      const childKeys = yield* writeExecution(execution("range.e1.b1.p1.1", 0), nodes(1))
      yield* startRole()
      yield* store.commit("line-1", [...keys, ...childKeys])
      const all = [...keys, ...childKeys]
      yield* until(storedBytes(all), (rows) => rows.size === all.length, { what: "every key stored" })
      const stored = yield* storedBytes(all)
      const inValkey = yield* valkeyBytes(all)
      expect(all.map((k) => stored.get(k))).toEqual(inValkey.map((b) => Buffer.from(b!)))

      const nodePrefix = (yield* store.executionKeyPrefix("range.e1")) + "n:"
      const range = yield* storage.readPrefix(nodePrefix)
      // Seq 9 before 10: six-digit padding makes byte order run order.
      expect(range.map((r) => Number(r.key.slice(-6)))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
      const whole = yield* storage.readPrefix(yield* store.executionKeyPrefix("range.e1"))
      expect(whole.map((r) => r.key)).toEqual([...keys].sort())
      yield* until(pendingIn("line-1"), (n) => n === 0, { what: "the request acknowledged" })
    }).pipe(Effect.scoped),
    TEST_TIMEOUT_MS
  )

  it.effect("refuses a commit request with a foreign key: counted, acknowledged, and nothing of it written", () =>
    Effect.gen(function* () {
      const store = yield* ExecutionLogStore
      const valkey = yield* Valkey
      const own = yield* writeExecution(execution("refused.e1", 1), nodes(2))
      // Keys outside `{prefix}:dag:log:`: another island's log key (it exists) and a job order.
      const otherIsland = `other-${prefix}:dag:log:refused.e1:exec`
      yield* unsafeCommand(valkey, "set foreign", (c) => c.set(otherIsland, Buffer.from(encodeExecution(execution("refused.e1", 1)))))
      const jobOrder = yield* valkey.key("jobOrder", { id: "jo-1" })
      const before = yield* countOf(Metric.withAttributes(refusedCounter, { reason: "foreign-key" }))
      yield* startRole()

      yield* store.commit("line-2", [own[0]!, otherIsland, own[1]!])
      yield* store.commit("line-2", [own[2]!, jobOrder])
      // A good request after them: once it is stored, the two before it were handled.
      const later = yield* writeExecution(execution("refused.later", 0), nodes(1))
      yield* store.commit("line-2", later)
      yield* until(storedBytes(later), (rows) => rows.size === later.length, { what: "the later request stored" })

      expect((yield* storedBytes([...own, otherIsland, jobOrder])).size).toBe(0)
      expect((yield* countOf(Metric.withAttributes(refusedCounter, { reason: "foreign-key" }))) - before).toBe(2)
      yield* until(pendingIn("line-2"), (n) => n === 0, { what: "refused requests acknowledged, not retried" })
      yield* unsafeCommand(valkey, "cleanup", (c) => c.del(otherIsland))
    }).pipe(Effect.scoped),
    TEST_TIMEOUT_MS
  )

  it.effect("a batch committed twice leaves one row per key with the same bytes", () =>
    Effect.gen(function* () {
      const store = yield* ExecutionLogStore
      const keys = yield* writeExecution(execution("twice.e1", 6), nodes(7))
      yield* startRole()
      // One request after the other (two requests in one batch would be copied once).
      for (const round of [1, 2]) {
        const before = yield* countOf(committedCounter)
        yield* store.commit("line-3", keys)
        yield* until(countOf(committedCounter), (n) => n - before >= keys.length, { what: `commit ${round} copied` })
      }
      const storage = yield* LogStorage
      const rows = yield* storage.readPrefix(yield* store.executionKeyPrefix("twice.e1"))
      expect(rows.map((r) => r.key)).toEqual([...keys].sort())
      const valkeyValues = new Map(keys.map((k, i) => [k, i]))
      const bytes = yield* valkeyBytes(keys)
      for (const row of rows) expect(Buffer.from(row.value)).toEqual(Buffer.from(bytes[valkeyValues.get(row.key)!]!))
    }).pipe(Effect.scoped),
    TEST_TIMEOUT_MS
  )

  it.effect("killed with SIGKILL in the middle of a batch and restarted, the role commits everything once", () =>
    Effect.gen(function* () {
      const store = yield* ExecutionLogStore
      const pg = yield* TestPg
      const keys: Array<string> = []
      for (let e = 0; e < 4; e++) keys.push(...(yield* writeExecution(execution(`killed.e${e}`, 4), nodes(5))))
      yield* store.commit("line-4", keys.slice(0, 10))
      yield* store.commit("line-4", keys.slice(10))

      // The child upserts the first part of its batch, says so, and hangs before the rest.
      const child = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const proc = spawn(process.execPath, ["--import", "tsx/esm", "--conditions=source", "packages/execution-log/test/StorageRoleProcess.ts"], {
            cwd: ROOT,
            env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", VALKEY_URL: inject("valkeyUrl"), PREFIX: prefix, PG_URL: pg.url, CONSUMER: "storage-killed" },
            stdio: ["ignore", "pipe", "pipe"]
          })
          const said = Effect.runSync(Queue.unbounded<number>())
          let err = ""
          proc.stdout.on("data", (chunk: Buffer) => {
            for (const m of chunk.toString().matchAll(/^mid-batch (\d+)$/gm)) Queue.offerUnsafe(said, Number(m[1]))
          })
          proc.stderr.on("data", (chunk: Buffer) => void (err += chunk.toString()))
          return { proc, said, stderr: () => err }
        }),
        ({ proc }) => Effect.sync(() => void (proc.exitCode === null && proc.kill("SIGKILL")))
      )
      const upserted = yield* Queue.take(child.said).pipe(
        Effect.timeoutOrElse({ duration: "40 seconds", orElse: () => Effect.fail(new Error(`the child never reached the middle of a batch: ${child.stderr()}`)) })
      )
      expect(upserted).toBeGreaterThan(0)
      const partial = (yield* storedBytes(keys)).size
      expect(partial).toBe(upserted)
      expect(partial).toBeLessThan(keys.length)
      child.proc.kill("SIGKILL")

      // Restarted under the same consumer name, it picks its pending requests up at once.
      yield* startRole({ ...quick, consumer: "storage-killed" })
      yield* until(pendingIn("line-4"), (n) => n === 0, { what: "every request acknowledged after the restart", within: "20 seconds" })
      const storage = yield* LogStorage
      const rows = (yield* Effect.forEach([0, 1, 2, 3], (e) => Effect.flatMap(store.executionKeyPrefix(`killed.e${e}`), storage.readPrefix))).flat()
      expect(rows.map((r) => r.key)).toEqual([...keys].sort())
      const bytes = yield* valkeyBytes(keys)
      const byKey = new Map(keys.map((k, i) => [k, Buffer.from(bytes[i]!)]))
      for (const row of rows) expect(Buffer.from(row.value)).toEqual(byKey.get(row.key))
    }).pipe(Effect.scoped),
    TEST_TIMEOUT_MS
  )
})
