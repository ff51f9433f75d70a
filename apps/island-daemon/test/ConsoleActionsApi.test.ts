import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { decodeOrigin, MethodEventTypes } from "@microdcs/job-state"
import { storeLayer } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { actionRoutes } from "../src/HttpRoutes.js"
import { bearer, deadLetterCommit, OPERATOR, post, stableSnapshot, VIEWER, writeTokenFile } from "./ConsoleActionKit.js"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"
import { allChanges, axleJobOrder, configureAxleStation, eventually, jobOrderOf, makeMes, publisherCaughtUp, SCOPE } from "./IslandKit.js"

/**
 * The console's actions over HTTP, with a token file of an operator and a viewer: the viewer is
 * refused every action (403) and changes nothing; a cross-site request and one without a JSON
 * body are refused; a refused action says why with a stable code and changes nothing; the
 * operator's methods go through job control, the retry through the engine, and each is audited
 * (`console:alice`, from the peer's address, the comment) in the change stream, the execution log
 * and the job page. No station answers: the running job's first action stays open.
 */

let broker: MosquittoServer
let d: DaemonProcess
const prefix = randomPrefix("ca")
const store = Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))
const RUNNING = "jo-ca-run"
const STORED = "jo-ca-stored"

type Json = Record<string, unknown>
const job = async (id: string) => (await d.get(`/api/console/jobs/${id}`, bearer(OPERATOR.token))).json() as Json

beforeAll(async () => {
  broker = await startMosquitto()
  d = await spawnDaemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "console-actions", extra: { HTTP_TOKEN_FILE: writeTokenFile() } }))
  await d.waitReady()
  await Effect.runPromise(
    Effect.gen(function* () {
      const mes = yield* makeMes(broker.url, prefix)
      yield* configureAxleStation(mes)
      yield* mes.ok(MethodEventTypes.StoreAndStart, { JobOrder: axleJobOrder(RUNNING) })
      yield* mes.ok(MethodEventTypes.Store, { JobOrder: axleJobOrder(STORED) })
      yield* eventually(Effect.map(jobOrderOf(RUNNING), (o) => (o?.state === "Running" ? o : undefined)), 20_000, "the job runs")
      // The snapshots below compare the store before and after a refused request: let the
      // publisher mirror the setup's changes first, so only a request could change anything.
      yield* publisherCaughtUp(SCOPE)
    }).pipe(Effect.scoped, Effect.provide(store))
  )
}, 60_000)

afterAll(async () => {
  await d?.stop("SIGTERM")
  await broker?.stop()
})

/** Every action route with a value for each parameter. */
const actionPaths = actionRoutes.map((r) =>
  r.path.replace(/:(\w+)/g, (_, name: string) => ({ id: RUNNING, method: "Pause", scope: SCOPE, stream: "dagcommit", entry: "1-0" })[name] ?? name)
)

describe("who may act", () => {
  it("the page learns the user and the role from /api/console/me", async () => {
    expect((await d.get("/api/console/me", bearer(OPERATOR.token))).json()).toEqual({ user: "alice", role: "operator", actions: true })
    expect((await d.get("/api/console/me", bearer(VIEWER.token))).json()).toEqual({ user: "bob", role: "viewer", actions: false })
    expect((await d.get("/api/console/me")).status).toBe(401)
  })

  it.live("a viewer is refused every action with 403 and says why; nothing changes", () =>
    Effect.gen(function* () {
      const before = yield* stableSnapshot
      for (const path of actionPaths) {
        const reply = yield* Effect.promise(() => post(d, path, VIEWER.token, path.endsWith("/retry") ? { action: "position", comment: "x" } : {}))
        expect(reply.status, path).toBe(403)
        expect(reply.json(), path).toEqual({ error: "forbidden", message: "bob is a viewer: actions need an operator's token" })
        const none = yield* Effect.promise(() => d.request("POST", path, { "content-type": "application/json" }))
        expect(none.status, path).toBe(401)
      }
      expect(yield* stableSnapshot).toEqual(before)
    }).pipe(Effect.provide(store))
  )

  it.live("an operator's request from another site, or without a JSON body, is refused; nothing changes", () =>
    Effect.gen(function* () {
      const before = yield* stableSnapshot
      const path = `/api/console/jobs/${RUNNING}/actions/Pause`
      const evil = yield* Effect.promise(() => post(d, path, OPERATOR.token, {}, { origin: "http://evil.example" }))
      expect(evil.status).toBe(403)
      expect(evil.json()).toMatchObject({ error: "cross-site", message: expect.stringContaining("http://evil.example") })
      const site = yield* Effect.promise(() => post(d, path, OPERATOR.token, {}, { "sec-fetch-site": "cross-site" }))
      expect(site.json()).toMatchObject({ error: "cross-site" })
      const opaque = yield* Effect.promise(() => post(d, path, OPERATOR.token, {}, { origin: "null" }))
      expect(opaque.json()).toMatchObject({ error: "cross-site" })
      const form = yield* Effect.promise(() => d.request("POST", path, { ...bearer(OPERATOR.token), "content-type": "application/x-www-form-urlencoded" }, "comment=x"))
      expect(form.status).toBe(415)
      expect(form.json()).toMatchObject({ error: "json-required" })
      expect(yield* stableSnapshot).toEqual(before)
    }).pipe(Effect.provide(store))
  )

  it("a write anywhere else is 405, as before", async () => {
    for (const path of ["/api/console/jobs/x", "/api/scopes", "/"]) {
      const reply = await post(d, path, OPERATOR.token)
      expect(reply.status, path).toBe(405)
      expect(reply.headers.get("allow")).toBe("GET, HEAD")
    }
    expect((await d.request("PUT", `/api/console/jobs/${RUNNING}/actions/Pause`, bearer(OPERATOR.token))).status).toBe(405)
  })
})

describe("refused actions say why and change nothing", () => {
  it.live("bad bodies, an unknown method, an unknown job, a state that does not allow the method, an engine that refuses", () =>
    Effect.gen(function* () {
      const before = yield* stableSnapshot
      const cases: ReadonlyArray<readonly [string, unknown, number, string]> = [
        [`/api/console/jobs/${RUNNING}/actions/Explode`, {}, 404, "unknown-method"],
        [`/api/console/jobs/${RUNNING}/actions/Pause`, { comment: 7, extra: true }, 400, "bad-request"],
        [`/api/console/jobs/${RUNNING}/actions/Pause`, [1], 400, "bad-request"],
        [`/api/console/jobs/${RUNNING}/actions/Pause`, { comment: "c".repeat(20_000) }, 400, "bad-request"],
        [`/api/console/jobs/${RUNNING}/actions/Pause`, { comment: "c".repeat(1001) }, 400, "invalid"],
        [`/api/console/jobs/jo-nobody/actions/Pause`, {}, 404, "unknown-job"],
        [`/api/console/jobs/${RUNNING}/actions/Start`, {}, 409, "state-refuses"],
        [`/api/console/jobs/${STORED}/actions/Pause`, {}, 409, "state-refuses"],
        [`/api/console/jobs/${RUNNING}/retry`, { action: "tighten", comment: "why not" }, 409, "engine-refuses"],
        [`/api/console/jobs/${RUNNING}/retry`, { action: "nope", comment: "why not" }, 404, "unknown-action"],
        [`/api/console/jobs/${RUNNING}/retry`, { action: "position" }, 400, "invalid"],
        [`/api/console/jobs/${STORED}/retry`, { action: "position", comment: "c" }, 404, "no-execution"],
        [`/api/console/scopes/${SCOPE}/streams/dagcommit/deadletters/1-0/redrive`, {}, 404, "unknown-dead-letter"],
        [`/api/console/scopes/${SCOPE}/streams/nostream/deadletters/redrive-all`, {}, 400, "invalid"]
      ]
      for (const [path, body, status, error] of cases) {
        const reply = yield* Effect.promise(() => post(d, path, OPERATOR.token, body))
        expect(reply.status, `${path} ${reply.text}`).toBe(status)
        expect(reply.json(), path).toMatchObject({ error, message: expect.any(String) })
      }
      const bad = yield* Effect.promise(() => post(d, `/api/console/jobs/${RUNNING}/actions/Pause`, OPERATOR.token, { comment: 7, extra: true }))
      expect((bad.json() as Json)["message"]).toBe("unknown field extra: the fields are scope, comment; comment must be a string")
      expect(yield* stableSnapshot).toEqual(before)
    }).pipe(Effect.provide(store))
  )
})

/** The origin of the job's last change entry. */
const lastOrigin = (id: string) => Effect.map(allChanges(SCOPE), (changes) => decodeOrigin(changes.filter((c) => c.id === id).at(-1)?.origin))

/** The execution log's rows of the job. */
const logRows = async (id: string) => ((await d.get(`/api/executions/${id}/tree`, bearer(OPERATOR.token))).json() as { rows: ReadonlyArray<Json> }).rows

describe("an operator acts, and the audit trail names who, from where and why", () => {
  it.live("Pause, Resume, a retry, Abort and Clear of the running job", () =>
    Effect.gen(function* () {
      const action = (method: string, comment: string) => Effect.promise(() => post(d, `/api/console/jobs/${RUNNING}/actions/${method}`, OPERATOR.token, { comment }))
      expect((yield* Effect.promise(() => job(RUNNING)))["allowed"]).toEqual(["Pause", "Stop", "Abort"])

      const paused = yield* action("Pause", "tool change")
      expect(paused.status, paused.text).toBe(200)
      expect(paused.json()).toMatchObject({ ok: true, id: RUNNING, scope: SCOPE, method: "Pause", state: expect.stringMatching(/^Interrupted/) })
      const origin = yield* lastOrigin(RUNNING)
      expect(origin).toMatchObject({ kind: "console", id: "alice", comment: "tool change", from: expect.stringMatching(/127\.0\.0\.1$/) })
      const pausedView = yield* eventually(Effect.promise(() => job(RUNNING)).pipe(Effect.map((v) => ((v["execution"] as Json)["status"] === "paused" ? v : undefined))), 10_000, "paused")
      expect(pausedView["allowed"]).toEqual(["Resume", "Stop", "Abort"])
      // The log is written behind the state: the pause node shows up shortly after.
      const pauseNode = yield* eventually(Effect.promise(() => logRows(RUNNING)).pipe(Effect.map((rows) => rows.find((r) => JSON.stringify(r).includes('"pause"')))), 10_000, "the pause node")
      expect(JSON.stringify(pauseNode)).toContain("console:alice")
      expect(JSON.stringify(pauseNode)).toContain("tool change")
      expect(JSON.stringify(pauseNode)).toContain(origin!.from!)

      expect((yield* action("Resume", "tool fitted")).status).toBe(200)
      yield* eventually(Effect.promise(() => job(RUNNING)).pipe(Effect.map((v) => ((v["execution"] as Json)["status"] === "running" ? v : undefined))), 10_000, "resumed")
      expect((yield* Effect.promise(() => job(RUNNING)))["retryable"]).toEqual(["position", "qa"])
      const retried = yield* Effect.promise(() => post(d, `/api/console/jobs/${RUNNING}/retry`, OPERATOR.token, { action: "position", comment: "station back" }))
      expect(retried.status, retried.text).toBe(200)
      expect(retried.json()).toMatchObject({ ok: true, action: "position", attempt: 2, status: "running" })

      expect((yield* action("Abort", "scrap it")).status).toBe(200)
      const aborted = yield* eventually(Effect.promise(() => job(RUNNING)).pipe(Effect.map((v) => ((v["execution"] as Json)["status"] === "aborted" ? v : undefined))), 10_000, "aborted")
      expect(JSON.stringify(aborted["execution"])).toContain("aborted by console:alice")
      expect(aborted["allowed"]).toEqual(["Clear"])
      const audit = aborted["audit"] as ReadonlyArray<Json>
      expect(audit.map((a) => [a["what"], a["actor"], a["comment"]])).toEqual([
        ["StoreAndStart", "mes:urn:test:mes", null],
        ["Pause", "console:alice", "tool change"],
        ["Resume", "console:alice", "tool fitted"],
        ["retry position", "console:alice", "station back"],
        ["Abort", "console:alice", "scrap it"]
      ])
      for (const row of audit.slice(1)) expect(row["from"]).toBe(origin!.from)

      const cleared = yield* action("Clear", "done with it")
      expect(cleared.json()).toMatchObject({ ok: true, method: "Clear", state: "EndState" })
      expect(yield* lastOrigin(RUNNING)).toMatchObject({ kind: "console", id: "alice", comment: "done with it" })
    }).pipe(Effect.provide(store)),
    60_000
  )

  it.live("Start and RevokeStart of a stored job; the scope may be given", () =>
    Effect.gen(function* () {
      expect((yield* Effect.promise(() => job(STORED)))["allowed"]).toEqual(["Start", "Abort", "Cancel"])
      const started = yield* Effect.promise(() => post(d, `/api/console/jobs/${STORED}/actions/Start`, OPERATOR.token, { scope: SCOPE }))
      expect(started.json()).toMatchObject({ ok: true, method: "Start" })
      const elsewhere = yield* Effect.promise(() => post(d, `/api/console/jobs/${STORED}/actions/RevokeStart`, OPERATOR.token, { scope: "line-9" }))
      expect(elsewhere.json()).toMatchObject({ error: "unknown-job" })
    }).pipe(Effect.provide(store))
  )

  it.live("redrive one dead letter, then all of a stream", () =>
    Effect.gen(function* () {
      const one = yield* deadLetterCommit(SCOPE)
      yield* deadLetterCommit(SCOPE)
      yield* deadLetterCommit(SCOPE)
      const path = `/api/console/scopes/${SCOPE}/streams/dagcommit/deadletters`
      const redriven = yield* Effect.promise(() => post(d, `${path}/${one}/redrive`, OPERATOR.token, { comment: "fixed the database" }))
      expect(redriven.status, redriven.text).toBe(200)
      expect(redriven.json()).toMatchObject({ ok: true, redriven: 1, skipped: 0, outcomes: [{ deadLetterId: one, status: "redriven" }] })
      const again = yield* Effect.promise(() => post(d, `${path}/${one}/redrive`, OPERATOR.token))
      expect(again.json()).toMatchObject({ error: "unknown-dead-letter" })
      const all = yield* Effect.promise(() => post(d, `${path}/redrive-all`, OPERATOR.token))
      expect(all.json()).toMatchObject({ ok: true, redriven: 2, skipped: 0 })
      // Who redrove, in the daemon's log; never a token.
      expect(d.stdout()).toContain("dead letters redriven from the console")
      for (const token of [OPERATOR.token, VIEWER.token]) expect(d.stdout() + d.stderr()).not.toContain(token)
    }).pipe(Effect.provide(store))
  )
})
