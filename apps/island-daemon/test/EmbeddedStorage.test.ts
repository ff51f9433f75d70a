import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { writeExecution } from "@microdcs/execution-log/testing"
import { ExecutionLogStore, storeLayer } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemon, daemonEnv, type DaemonProcess } from "./DaemonProcess.js"
import { eventually, SCOPE } from "./IslandKit.js"
import { COMMITTED, execution, metric, node } from "./LogStorageKit.js"

/**
 * The daemon's embedded database (no PG_URL): started on a thread of its own in the background,
 * so the island is ready before it is and commits wait for it; its archive kept in PG_DATA_DIR,
 * so a restarted daemon still has what it committed.
 */

let broker: MosquittoServer
const dirs: Array<string> = []
beforeAll(async () => {
  broker = await startMosquitto()
}, 60_000)
afterAll(async () => {
  await broker?.stop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const freshDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "daemon-pg-"))
  dirs.push(dir)
  return join(dir, "archive")
}

/** The island's log in Valkey, as the engine writes it. */
const world = (prefix: string) => ExecutionLogStore.Default.pipe(Layer.provideMerge(storeLayer({ url: inject("valkeyUrl"), prefix })))

const storageDaemon = (prefix: string, instanceId: string, dataDir: string, roles = "storage") =>
  daemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId, extra: { ISLAND_ROLES: roles, PG_DATA_DIR: dataDir } }), { ready: false })

/** The first `/readyz` that answers 200: its body. */
const firstReady = (d: DaemonProcess) =>
  eventually(
    Effect.promise(async () => {
      const reply = await d.get("/readyz").catch(() => undefined)
      return reply?.status === 200 ? (reply.json() as { roles: Record<string, unknown> }) : undefined
    }),
    60_000,
    "the first 200 of /readyz"
  )

const storageUp = (d: DaemonProcess) =>
  eventually(
    Effect.promise(async () => {
      const reply = await d.get("/readyz")
      return reply.status === 200 && JSON.stringify((reply.json() as { roles: Record<string, unknown> }).roles["storage"]) === '{"ok":true}' ? true : undefined
    }),
    60_000,
    "the embedded database up"
  )

describe("the embedded database of the storage role", () => {
  it.live(
    "does not hold the island back: ready while the database is still being created, the role saying so; a commit made then waits and lands",
    () => {
      const prefix = randomPrefix("des")
      return Effect.gen(function* () {
        // A fresh directory: PGlite creates a database in it first, seconds of work on its own thread.
        const d = yield* storageDaemon(prefix, "embedded-start", freshDataDir(), "job-control,storage")
        const first = yield* firstReady(d)
        expect(first.roles).toEqual({ "job-control": { ok: true }, storage: { ok: true, detail: "starting the database; commits wait for it" } })

        const keys = yield* writeExecution(execution("des.e1", 1), [node(0), node(1)])
        yield* Effect.flatMap(ExecutionLogStore, (store) => store.commit(SCOPE, keys))
        yield* eventually(Effect.map(metric(d, COMMITTED), (n) => (n >= keys.length ? n : undefined)), 60_000, "the keys committed once the database is up")
        yield* storageUp(d)
        const exit = yield* Effect.promise(() => d.stop("SIGTERM"))
        expect(exit.code, d.stderr()).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(world(prefix)))
    },
    150_000
  )

  it.live(
    "keeps the archive in PG_DATA_DIR: after a restart the daemon serves from it what it committed before, though Valkey no longer has it",
    () => {
      const prefix = randomPrefix("dek")
      const dataDir = freshDataDir()
      return Effect.gen(function* () {
        const store = yield* ExecutionLogStore
        const before = yield* storageDaemon(prefix, "embedded-keep", dataDir)
        yield* storageUp(before)
        const keys = yield* writeExecution(execution("dek.e1", 1), [node(0), node(1)])
        yield* store.commit(SCOPE, keys)
        yield* eventually(Effect.map(metric(before, COMMITTED), (n) => (n >= keys.length ? n : undefined)), 30_000, "the keys committed")
        const tree = (yield* Effect.promise(() => before.get("/api/executions/dek.e1/tree"))).json()
        expect((yield* Effect.promise(() => before.stop("SIGTERM"))).code, before.stderr()).toBe(0)

        // Retention removed the execution from Valkey while the daemon was down.
        yield* store.remove([{ executionId: "dek.e1", lastSeq: 1 }])
        const after = yield* storageDaemon(prefix, "embedded-keep", dataDir)
        yield* storageUp(after)
        const reply = yield* Effect.promise(() => after.get("/api/executions/dek.e1/tree"))
        expect(reply.status, reply.text).toBe(200)
        expect(reply.json()).toEqual({ ...(tree as object), storage: "postgres" })
        expect((yield* Effect.promise(() => after.stop("SIGTERM"))).code, after.stderr()).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(world(prefix)))
    },
    180_000
  )
})
