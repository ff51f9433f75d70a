import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { JobStates, MethodEventTypes } from "@microdcs/job-state"
import { JOURNAL_CONFIG_EVENT_TYPE } from "@microdcs/journal"
import { storeLayer } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { putJobOrder, snapshot } from "@microdcs/testkit"
import { actionRoutes, daemonRoutes } from "../src/HttpRoutes.js"
import { bearer, OPERATOR, post, VIEWER, writeTokenFile } from "./ConsoleActionKit.js"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"
import { axleJobOrder, axleStation, completedCount, configureAxleStation, eventually, fixture, makeMes, SCOPE } from "./IslandKit.js"

/**
 * A viewer's token changes nothing; an operator's action changes exactly what it names; whatever
 * the server shows comes back as JSON text.
 *
 * A first daemon runs one axle job to completion (so every route has something to read: a scope,
 * job orders, a job response, an execution) and stops; a job order whose id and document carry
 * markup is put beside it. A second daemon with the job-control role only (it writes nothing
 * while no command comes), with a viewer and an operator in its token file, then serves every
 * registered route, and every key under the prefix is compared before and after requests of every
 * method to each of them, as the viewer and without a token; then the operator cancels one job
 * order and only that job order's keys, the change stream and the engine's nudges differ.
 */

let broker: MosquittoServer
let reader: DaemonProcess | undefined
const prefix = randomPrefix("ro")
const store = Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))

const JOB = "jo-ro-01"
const MARKUP_ID = `jo-<script>alert("x")</script>&'`
const MARKUP_NOTE = `<img src=x onerror="alert(1)">`

/** A value for each path parameter of the routes; a route with another parameter fails the walk until it is added. */
const paramValues: Readonly<Record<string, string>> = {
  action: "abort",
  scope: SCOPE,
  id: JOB,
  jobId: JOB,
  journal: "torque",
  counter: "nok_torque_1h",
  method: "Abort",
  stream: "sfc",
  entry: "1-0"
}
/** The query a route needs to answer 200. */
const queries: Readonly<Record<string, string>> = {
  "/api/scopes/:scope/jobresponses": "?state=Ended_Completed",
  "/api/journals/:scope/:journal/recall": "?key=job&value=" + JOB,
  "/api/journals/:scope/:journal/counters/:counter": "?value=nutrunner-3",
  // The console's live feed ends after its first event (else a GET never ends).
  "/api/console/events": "?max=1"
}

const concretePath = (path: string): string =>
  path.replace(/:(\w+)/g, (_, name: string) => {
    const value = paramValues[name]
    if (value === undefined) throw new Error(`route ${path}: no test value for the parameter :${name}, add it to paramValues`)
    return encodeURIComponent(value)
  }) + (queries[path] ?? "")

const WRITE_METHODS = ["POST", "PUT", "PATCH", "DELETE"]

beforeAll(async () => {
  broker = await startMosquitto()
  await Effect.runPromise(
    Effect.gen(function* () {
      const env = daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "ro-writer" })
      const writer = yield* Effect.promise(() => spawnDaemon(env))
      yield* Effect.promise(() => writer.waitReady())
      yield* axleStation(broker.url, prefix)
      const mes = yield* makeMes(broker.url, prefix)
      yield* configureAxleStation(mes)
      // A journal of the torque results, so the journal routes have one to read (and entries to recall).
      yield* mes.ok(JOURNAL_CONFIG_EVENT_TYPE, fixture("journal-torque.json"))
      yield* mes.ok(MethodEventTypes.StoreAndStart, { JobOrder: axleJobOrder(JOB) })
      yield* eventually(Effect.map(completedCount([JOB]), (n) => (n === 1 ? n : undefined)), 30_000, "the job completed")
      const exit = yield* Effect.promise(() => writer.stop("SIGTERM"))
      expect(exit.code, writer.stderr()).toBe(0)
      yield* putJobOrder(SCOPE, { JobOrderID: MARKUP_ID, Description: [{ Text: MARKUP_NOTE }] }, { state: JobStates.NotAllowedToStart_Ready, change: "Store" })
      reader = yield* Effect.promise(() => spawnDaemon({ ...env, ISLAND_INSTANCE_ID: "ro-reader", ISLAND_ROLES: "job-control", HTTP_TOKEN_FILE: writeTokenFile() }))
      yield* Effect.promise(() => reader!.waitReady())
    }).pipe(Effect.scoped, Effect.provide(store))
  )
}, 60_000)

afterAll(async () => {
  await reader?.stop("SIGKILL")
  await broker?.stop()
})

describe("a viewer changes nothing", () => {
  it("every read route is a GET; the only POSTs are the console's actions", () => {
    const routes = daemonRoutes
    expect(routes.length).toBeGreaterThan(0)
    for (const route of routes) expect(route.method, route.path).toBe("GET")
    for (const route of actionRoutes) expect([route.method, route.path.startsWith("/api/console/")], route.path).toEqual(["POST", true])
    // No mounted app: no wildcard route hands a whole subtree to one handler the walk below cannot see.
    expect(routes.filter((route) => route.path === "*" || route.path.endsWith("/*")).map((route) => route.path)).toEqual([])
  })

  it.live(
    "requests of every method to every route change no key: GET and HEAD answer, a write method is 405 with Allow, an action is 403 for the viewer and 401 without a token",
    () =>
      Effect.gen(function* () {
        const d = reader!
        const paths = daemonRoutes.map((route) => concretePath(route.path))
        const before = yield* snapshot
        expect(Object.keys(before).length).toBeGreaterThan(0)
        const viewer = bearer(VIEWER.token)
        for (const path of paths) {
          const got = yield* Effect.promise(() => d.get(path, viewer))
          expect(got.status, `GET ${path}: ${got.text}`).toBe(200)
          const head = yield* Effect.promise(() => d.request("HEAD", path, viewer))
          expect(head.status, `HEAD ${path}`).toBe(200)
          expect(head.text).toBe("")
          for (const method of WRITE_METHODS) {
            const reply = yield* Effect.promise(() => d.request(method, path, { ...viewer, "content-type": "application/json" }))
            expect(reply.status, `${method} ${path}`).toBe(405)
            expect(reply.headers.get("allow")).toBe("GET, HEAD")
            expect(reply.json()).toEqual({ error: "method-not-allowed" })
          }
        }
        for (const path of actionRoutes.map((route) => concretePath(route.path))) {
          const refused = yield* Effect.promise(() => post(d, path, VIEWER.token, { action: "position", comment: "c" }))
          expect([refused.status, refused.json()], path).toEqual([403, { error: "forbidden", message: "bob is a viewer: actions need an operator's token" }])
          expect((yield* Effect.promise(() => d.request("POST", path, { "content-type": "application/json" }))).status, path).toBe(401)
        }
        // A write method is refused everywhere, also where no route is.
        expect((yield* Effect.promise(() => d.request("POST", "/api/nothing-here"))).status).toBe(405)
        expect((yield* Effect.promise(() => d.request("DELETE", "/"))).status).toBe(405)
        expect(yield* snapshot).toEqual(before)
      }).pipe(Effect.provide(store)),
    30_000
  )
})

describe("HTTP escapes what it shows", () => {
  it.live(
    "an id and a document with markup come back as JSON text, as application/json with nosniff",
    () =>
      Effect.gen(function* () {
        const d = reader!
        const one = yield* Effect.promise(() => d.get(`/api/joborders/${encodeURIComponent(MARKUP_ID)}`, bearer(VIEWER.token)))
        expect(one.status, one.text).toBe(200)
        expect(one.headers.get("content-type")).toBe("application/json")
        expect(one.headers.get("x-content-type-options")).toBe("nosniff")
        // JSON text: the markup is inside JSON strings, quotes escaped, nothing else around it.
        expect(one.text.startsWith("{")).toBe(true)
        expect(one.text).toContain(JSON.stringify(MARKUP_ID))
        expect(one.text).toContain(JSON.stringify(MARKUP_NOTE))
        expect(one.json()).toMatchObject({ id: MARKUP_ID, document: { JobOrder: { JobOrderID: MARKUP_ID, Description: [{ Text: MARKUP_NOTE }] } } })

        const listed = yield* Effect.promise(() => d.get(`/api/scopes/${SCOPE}/joborders`, bearer(VIEWER.token)))
        expect(listed.headers.get("content-type")).toBe("application/json")
        expect((listed.json() as { items: ReadonlyArray<{ id: string }> }).items.map((i) => i.id)).toContain(MARKUP_ID)

        // Not found: the id is echoed inside the JSON error, also for a path no route has.
        const missing = yield* Effect.promise(() => d.get(`/api/joborders/${encodeURIComponent("<script>x</script>")}`, bearer(VIEWER.token)))
        expect(missing.status).toBe(404)
        expect(missing.headers.get("content-type")).toBe("application/json")
        expect(missing.headers.get("x-content-type-options")).toBe("nosniff")
        expect(missing.json()).toEqual({ error: "not-found", message: "job order <script>x</script> does not exist" })
        const nowhere = yield* Effect.promise(() => d.get(`/api/${encodeURIComponent("<b>")}`, bearer(VIEWER.token)))
        expect(nowhere.headers.get("content-type")).toBe("application/json")
        expect(nowhere.json()).toEqual({ error: "not-found", message: "/api/<b> does not exist" })

        // Every answer, the probes and the metrics too, forbids sniffing and caching.
        for (const path of ["/healthz", "/readyz", "/metrics", "/nowhere"]) {
          const reply = yield* Effect.promise(() => d.get(path))
          expect(reply.headers.get("x-content-type-options"), path).toBe("nosniff")
          expect(reply.headers.get("cache-control"), path).toBe("no-store")
        }
      }),
    30_000
  )
})

describe("an operator's action changes exactly what it names", () => {
  it.live(
    "a Cancel of one job order changes that job order's keys, the change stream and the nudges, nothing else",
    () =>
      Effect.gen(function* () {
        const before = yield* snapshot
        const done = yield* Effect.promise(() => post(reader!, `/api/console/jobs/${encodeURIComponent(MARKUP_ID)}/actions/Cancel`, OPERATOR.token, { comment: "not needed" }))
        expect(done.status, done.text).toBe(200)
        const after = yield* snapshot
        const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((key) => before[key] !== after[key])
        // A key of the job order, the change stream, a nudge, or an index whose change is the job order's entry.
        const mentions = (text: string | undefined) => text !== undefined && text.includes("jo-<script>alert(")
        const named = (key: string) => key.includes(MARKUP_ID) || /:(changes|nudge[^:]*):/.test(key) || mentions(before[key]) || mentions(after[key])
        expect(changed.length).toBeGreaterThan(0)
        expect(changed.filter((key) => !named(key))).toEqual([])
        // The other job order is untouched.
        expect(changed.filter((key) => key.includes(JOB))).toEqual([])
      }).pipe(Effect.provide(store)),
    30_000
  )
})
