import { createServer } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { inject } from "vitest"
import { writeExecution } from "@microdcs/execution-log/testing"
import {
  type EmbeddedPostgres,
  executionLookupLayer,
  LogStorage,
  logStorageLayer,
  startEmbeddedPostgres,
  storageDatabase
} from "@microdcs/execution-log"
import { ConfigEventTypes, workMasterDigest } from "@microdcs/job-control"
import { ExecutionLogStore, storeLayer, Valkey } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemonConfig } from "../src/DaemonConfig.js"
import { printStoredTree } from "../src/DemoExecutionTree.js"
import { daemon, daemonEnv, type DaemonProcess, spawnScript } from "./DaemonProcess.js"
import { eventually, fixture, makeMes, SCOPE } from "./IslandKit.js"
import { COMMITTED, execution, metric, node } from "./LogStorageKit.js"

/** A loopback port nothing listens on (the OS picked it, then it was closed again). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

/**
 * The execution log's storage role in the daemon: commit requests
 * become rows in PostgreSQL (at PG_URL, here a PGlite this file starts, or the daemon's own
 * embedded one), a foreign key is refused whole, readiness and /metrics show the role, the tree
 * is served over HTTP from Valkey or from storage, and the recipe catalogue with pinned digests.
 */

let broker: MosquittoServer
let pg: EmbeddedPostgres
beforeAll(async () => {
  ;[broker, pg] = await Promise.all([startMosquitto(), startEmbeddedPostgres()])
}, 60_000)
afterAll(async () => {
  await broker?.stop()
  await pg?.stop()
})

const world = (prefix: string) =>
  Layer.mergeAll(ExecutionLogStore.Default, logStorageLayer.pipe(Layer.provide(storageDatabase(pg.url)))).pipe(
    Layer.provideMerge(storeLayer({ url: inject("valkeyUrl"), prefix }))
  )

const storedKeys = (keys: ReadonlyArray<string>) => Effect.flatMap(LogStorage, (s) => s.readKeys(keys)).pipe(Effect.map((rows) => rows.map((r) => r.key)))

const REFUSED = `microdcs_execution_log_refused_total{reason="foreign-key"}`

const axle = fixture("work-master-axle.json")
const axleDigest = (workMasterDigest(axle) as { digest: string }).digest

/** The storage role's health once its database is up: `{ ok: true }` alone (no start under way), else undefined. */
const storageReady = (d: DaemonProcess) =>
  Effect.promise(async () => {
    const reply = await d.get("/readyz")
    const roles = reply.status === 200 ? (reply.json() as { roles: Record<string, unknown> }).roles : undefined
    return roles !== undefined && JSON.stringify(roles["storage"]) === JSON.stringify({ ok: true }) ? roles : undefined
  })

describe("the storage role in the daemon", () => {
  it.live(
    "with PG_URL: commits requested keys with the bytes unchanged, refuses a request with a foreign key whole, shows both in /metrics and /readyz",
    () => {
      const prefix = randomPrefix("dls")
      return Effect.gen(function* () {
        const d = yield* daemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "storage-1", extra: { ISLAND_ROLES: "job-control,storage", PG_URL: pg.url } }))
        // The database is connected in the background: a moment after ready, the role says it is up.
        yield* eventually(storageReady(d), 20_000, "the storage role's database up")
        const ready = (yield* Effect.promise(() => d.get("/readyz"))).json() as { roles: Record<string, unknown> }
        expect(ready.roles).toEqual({ "job-control": { ok: true }, storage: { ok: true } })

        const store = yield* ExecutionLogStore
        const keys = yield* writeExecution(execution("dls.e1", 2), [node(0), node(1, { kind: "action", name: "press", detail: { reply: "ok" } }), node(2)])
        yield* store.commit(SCOPE, keys)
        yield* eventually(Effect.map(storedKeys(keys), (found) => (found.length === keys.length ? found : undefined)), 20_000, "the keys stored")
        const rows = yield* Effect.flatMap(LogStorage, (s) => s.readKeys(keys))
        const inValkey = yield* store.readValues(rows.map((r) => r.key))
        expect(rows.map((r) => Buffer.from(r.value))).toEqual(inValkey.map((v) => Buffer.from(v!)))
        expect(yield* metric(d, COMMITTED)).toBeGreaterThanOrEqual(keys.length)

        // A key outside {prefix}:dag:log: refuses the whole request, its own keys included.
        const own = yield* writeExecution(execution("dls.refused", 0), [node(0)])
        const valkey = yield* Valkey
        const jobOrder = yield* valkey.key("jobOrder", { id: "jo-1" })
        yield* store.commit(SCOPE, [...own, jobOrder, `other-island:dag:log:dls.refused:exec`])
        yield* eventually(Effect.map(metric(d, REFUSED), (n) => (n >= 1 ? n : undefined)), 20_000, "the refusal counted")
        // A good request after it is stored: the refused one before it was handled.
        const later = yield* writeExecution(execution("dls.later", 0), [node(0)])
        yield* store.commit(SCOPE, later)
        yield* eventually(Effect.map(storedKeys(later), (found) => (found.length === later.length ? found : undefined)), 20_000, "the later keys stored")
        expect(yield* storedKeys([...own, jobOrder])).toEqual([])
        expect(yield* metric(d, REFUSED)).toBe(1)
        expect(d.logs().some((l) => l.message?.includes("execution log commit refused") && JSON.stringify(l.annotations).includes(jobOrder))).toBe(true)

        // Retention removed the execution from Valkey: the tree comes from storage, the same rows.
        const fromValkey = (yield* Effect.promise(() => d.get("/api/executions/dls.e1/tree"))).json()
        yield* store.remove([{ executionId: "dls.e1", lastSeq: 2 }])
        const fromStorage = yield* Effect.promise(() => d.get("/api/executions/dls.e1/tree"))
        expect(fromStorage.status, fromStorage.text).toBe(200)
        expect(fromStorage.json()).toEqual(fromValkey)
        expect(fromStorage.json()).toMatchObject({ resolvedAs: "execution", storage: "postgres", executions: ["dls.e1"] })
        // By job id: the job's top-level executions found in storage and Valkey.
        const byJob = (yield* Effect.promise(() => d.get("/api/executions/jo-log-1/tree"))).json() as { executions: ReadonlyArray<string> }
        expect(byJob.executions).toEqual(expect.arrayContaining(["dls.e1", "dls.later"]))

        const exit = yield* Effect.promise(() => d.stop("SIGTERM"))
        expect(exit.code, d.stderr()).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(world(prefix)))
    },
    90_000
  )

  it.live(
    "without PG_URL: the embedded PGlite; what retention removed from Valkey is still served from it",
    () => {
      const prefix = randomPrefix("dle")
      return Effect.gen(function* () {
        // The embedded PGlite starts on its own thread (seconds on a busy machine): a longer wait for it.
        const d = yield* daemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "storage-2", extra: { ISLAND_ROLES: "storage", PG_DATA_DIR: "memory://" } }), { ready: false })
        yield* eventually(storageReady(d), 60_000, "the embedded database up")
        const store = yield* ExecutionLogStore
        const child = "dle.e1.b.0.1"
        const keys = [
          ...(yield* writeExecution(execution("dle.e1", 1), [node(0), node(1, { kind: "branch", name: "b", children: [child] })])),
          ...(yield* writeExecution(execution(child, 0, { parent: { executionId: "dle.e1", seq: 1 } }), [node(0, { kind: "event", name: "part.done" })]))
        ]
        yield* store.commit(SCOPE, keys)
        yield* eventually(Effect.map(metric(d, COMMITTED), (n) => (n >= keys.length ? n : undefined)), 20_000, "the keys committed")
        yield* store.remove([{ executionId: "dle.e1", lastSeq: 1 }, { executionId: child, lastSeq: 0 }])
        const reply = yield* Effect.promise(() => d.get("/api/executions/dle.e1/tree"))
        expect(reply.status, reply.text).toBe(200)
        const rows = (reply.json() as { rows: ReadonlyArray<{ depth: number; type: string; executionId: string }> }).rows
        expect(rows.map((r) => `${r.depth} ${r.type} ${r.executionId}`)).toEqual(["0 execution dle.e1", "1 node dle.e1", "1 node dle.e1", `2 execution ${child}`, `3 node ${child}`])

        const unknown = yield* Effect.promise(() => d.get("/api/executions/nobody/tree"))
        expect(unknown.status).toBe(404)
        expect(unknown.json()).toEqual({ error: "not-found", message: "no execution or job nobody in the execution log" })
        const exit = yield* Effect.promise(() => d.stop("SIGTERM"))
        expect(exit.code, d.stderr()).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(world(prefix)))
    },
    120_000
  )
})

describe("a storage database that comes up late", () => {
  it.live(
    "with PG_URL not reachable yet the daemon waits, not ready, and becomes ready once PostgreSQL is up",
    () => {
      const prefix = randomPrefix("dlw")
      return Effect.gen(function* () {
        const port = yield* Effect.promise(freePort)
        const d = yield* daemon(
          daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "storage-late", extra: { ISLAND_ROLES: "storage", PG_URL: `postgres://postgres@127.0.0.1:${port}/postgres` } }),
          { ready: false }
        )
        yield* eventually(Effect.sync(() => (d.logs().some((l) => l.message?.includes("PostgreSQL does not answer; commits wait for it")) ? true : undefined)), 30_000, "the wait logged")
        // The wait is logged while the island is still being put together, so /readyz may
        // answer "starting" for a moment before the storage role's own problem shows.
        const waiting = yield* eventually(
          Effect.promise(() => d.get("/readyz")).pipe(Effect.map((r) => (r.status === 503 && (r.json() as { checks: Record<string, boolean> }).checks["started"] !== false ? r : undefined))),
          30_000,
          "the island's own readiness answer"
        )
        expect((waiting.json() as { problems: ReadonlyArray<string> }).problems).toEqual([expect.stringMatching(/^storage: waiting for PostgreSQL .*ECONNREFUSED/)])
        const late = yield* Effect.acquireRelease(Effect.promise(() => startEmbeddedPostgres({ port })), (p) => Effect.promise(() => p.stop()))
        yield* eventually(storageReady(d), 60_000, "ready once PostgreSQL is up")
        expect(late.port).toBe(port)
        const exit = yield* Effect.promise(() => d.stop("SIGTERM"))
        expect(exit.code, d.stderr()).toBe(0)
      }).pipe(Effect.scoped)
    },
    120_000
  )
})

describe("the recipe catalogue", () => {
  it.live(
    "/api/recipes lists each scope's recipes with their digests; RECIPE_DIGESTS refuses a work master whose recipe does not match, naming both digests",
    () => {
      const prefix = randomPrefix("dlr")
      const wrong = "e".repeat(64)
      return Effect.gen(function* () {
        const d = yield* daemon(
          daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "recipes-1", extra: { ISLAND_ROLES: "job-control", RECIPE_DIGESTS: `wm-axle-v1=${axleDigest},wm-pinned=${wrong}` } })
        )
        const mes = yield* makeMes(broker.url, prefix)
        yield* mes.ok(ConfigEventTypes.workmaster, axle)
        const refused = yield* mes.replyTo(yield* mes.send(ConfigEventTypes.workmaster, { ...axle, ID: "wm-pinned" }))
        expect(refused.data).toMatchObject({ ReturnStatus: 4294967296, ID: "wm-pinned", PinnedDigest: wrong, RecipeDigest: axleDigest })
        expect(refused.extensions["mdcserrorkind"]).toBe("RecipeDigestMismatch")
        expect(refused.extensions["mdcserrormessage"]).toContain(wrong)
        expect(refused.extensions["mdcserrormessage"]).toContain(axleDigest)

        const listed = yield* Effect.promise(() => d.get("/api/recipes"))
        expect(listed.status, listed.text).toBe(200)
        expect(listed.json()).toEqual({
          items: [{ scope: SCOPE, workMasterId: "wm-axle-v1", version: 1, digest: axleDigest, valid: true, pinnedDigest: axleDigest, pinMatches: true }],
          next: null
        })
        expect(((yield* Effect.promise(() => d.get("/api/recipes?scope=elsewhere"))).json() as { items: unknown }).items).toEqual([])
      }).pipe(Effect.scoped, Effect.provide(world(prefix)))
    },
    60_000
  )

  it("a malformed RECIPE_DIGESTS or PG_URL is a start error naming the variable (exit 2)", async () => {
    const base = { VALKEY_URL: "redis://127.0.0.1:1", MQTT_URL: "mqtt://127.0.0.1:1", HTTP_PORT: "0", ISLAND_INSTANCE_ID: "config-recipes" }
    for (const [variable, value, says] of [
      ["RECIPE_DIGESTS", "wm-1=not-a-digest", "not a SHA-256 digest"],
      ["PG_URL", "mysql://x", "PG_URL must look like postgres://"]
    ] as const) {
      const run = spawnScript("main.ts", { ...base, [variable]: value })
      const timer = setTimeout(() => run.child.kill("SIGKILL"), 15_000)
      const exit = await run.exited
      clearTimeout(timer)
      expect(exit.code, run.stderr()).toBe(2)
      expect(run.stderr()).toMatch(new RegExp(`^invalid configuration: .*${variable}: .*${says}`))
      expect(run.stdout()).toBe("")
    }
  }, 40_000)

  it.live("the demo's last lines: a finished job's tree read back from storage; a job without a log says so", () => {
    const prefix = randomPrefix("dlt")
    const printed: Array<string> = []
    return Effect.gen(function* () {
      const child = "jo-demo.e1.FitAndQa.0.1"
      const keys = [
        ...(yield* writeExecution(execution("jo-demo.e1", 1, { jobId: "jo-demo" }), [node(0, { name: "Init" }), node(1, { kind: "branch", name: "FitAndQa", children: [child] })])),
        ...(yield* writeExecution(execution(child, 0, { jobId: "jo-demo", parent: { executionId: "jo-demo.e1", seq: 1 } }), [node(0, { kind: "action", name: "press" })]))
      ]
      // As the storage role would have committed them; Valkey's copy is then changed, so a line read from Valkey would show.
      const store = yield* ExecutionLogStore
      yield* Effect.flatMap(LogStorage, (s) => Effect.flatMap(store.readValues(keys), (values) => s.upsert(keys.map((key, i) => ({ key, value: values[i]! })))))
      yield* writeExecution(execution(child, 0, { jobId: "jo-demo", parent: { executionId: "jo-demo.e1", seq: 1 } }), [node(0, { kind: "action", name: "press-in-valkey" })])
      const log = console.log
      console.log = (line: string) => void printed.push(line)
      yield* Effect.ensuring(
        Effect.andThen(printStoredTree("jo-demo"), printStoredTree("jo-none")),
        Effect.sync(() => void (console.log = log))
      )
      expect(printed).toEqual([
        "  execution log         jo-demo, read back from storage (5 rows):",
        `    execution jo-demo.e1  completed  recipe ${"d".repeat(12)}`,
        "      0 step Init  1 ms",
        "      1 branch FitAndQa  1 ms",
        `        execution ${child}  completed  recipe ${"d".repeat(12)}`,
        "          0 action press  1 ms",
        "  execution log         no execution log for jo-none"
      ])
    }).pipe(Effect.provide(executionLookupLayer.pipe(Layer.provideMerge(world(prefix)))))
  })

  it("ISLAND_ROLES: storage is a role of its own, on by default; -role leaves one out", async () => {
    const rolesOf = (value: string | undefined) =>
      Effect.runPromise(
        daemonConfig.parse(ConfigProvider.fromEnvRecord({ VALKEY_URL: "redis://127.0.0.1:1", MQTT_URL: "mqtt://127.0.0.1:1", ...(value === undefined ? {} : { ISLAND_ROLES: value }) }))
      ).then((c) => [...c.roles].sort())
    expect(await rolesOf(undefined)).toContain("storage")
    expect(await rolesOf("-storage")).not.toContain("storage")
    expect((await rolesOf("-storage")).length).toBe((await rolesOf(undefined)).length - 1)
    expect(await rolesOf("engine,storage,-engine")).toEqual(["storage"])
    await expect(rolesOf("-bogus")).rejects.toThrow(/ISLAND_ROLES/)
  })
})
