import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { JobStates, toStoredState } from "@microdcs/job-state"
import { JobResponseDao, storeLayer, TriggerStore } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { putJobOrder, putWorkMaster } from "@microdcs/testkit"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"
import { fixture, SCOPE } from "./IslandKit.js"

/**
 * The console over plain HTTP (the browser test is `ConsoleBrowser.test.ts`): the pages and
 * files it serves, the token on its API, refused input and the live feed, which ends when the
 * daemon stops. One daemon with a token.
 */

const TOKEN = "console-secret"
const auth = { authorization: `Bearer ${TOKEN}` }
let broker: MosquittoServer
let island: DaemonProcess
const prefix = randomPrefix("console-api")
const store = Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))

beforeAll(async () => {
  broker = await startMosquitto()
  island = await spawnDaemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "console-api", extra: { HTTP_TOKEN: TOKEN } }))
  await island.waitReady()
}, 60_000)

afterAll(async () => {
  await island?.stop("SIGKILL")
  await broker?.stop()
})

/** Reads Server-Sent Events from a streaming answer until `stop` says enough (or the stream ends). */
const readEvents = async (response: Response, stop: (events: ReadonlyArray<{ type: string; data: unknown }>) => boolean) => {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  const events: Array<{ type: string; data: unknown }> = []
  let buffer = ""
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return { events, ended: true }
    buffer += value
    let end: number
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const type = /^event: (.*)$/m.exec(block)?.[1] ?? "message"
      events.push({ type, data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "null") as unknown })
    }
    if (stop(events)) {
      await reader.cancel()
      return { events, ended: false }
    }
  }
}

describe("the console over HTTP", () => {
  it("serves its pages and files without the token, with a strict content security policy; no data in the markup", async () => {
    for (const path of ["/", "/console", `/console/scopes/${SCOPE}`, `/console/jobs/${encodeURIComponent("<b>x</b>")}`, "/console/config", "/console/streams", "/console/incidents"]) {
      const page = await island.get(path)
      expect(page.status, path).toBe(200)
      expect(page.headers.get("content-type"), path).toBe("text/html; charset=utf-8")
      expect(page.headers.get("content-security-policy"), path).toContain("script-src 'self'")
      expect(page.headers.get("x-content-type-options"), path).toBe("nosniff")
      expect(page.text).not.toContain("<b>x</b>")
    }
    const script = await island.get("/console/app.js")
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(script.text.length).toBeGreaterThan(1000)
    // Text goes in as text: the bundle never writes markup from data.
    expect(script.text).not.toContain("innerHTML")
    const css = await island.get("/console/app.css")
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8")
  })

  it("its API asks for the token like the rest of /api/", async () => {
    for (const path of ["/api/console/island", `/api/console/scopes/${SCOPE}/joborders`, "/api/console/config", "/api/console/streams", "/api/console/incidents", "/api/console/events?max=1"]) {
      expect((await island.get(path)).status, path).toBe(401)
      expect((await island.get(path, auth)).status, path).toBe(200)
    }
  })

  it("refuses bad input with a clear error", async () => {
    const refused = async (path: string, message: string) => {
      const reply = await island.get(path, auth)
      expect(reply.status, path).toBe(400)
      expect(reply.json(), path).toMatchObject({ error: "bad-request" })
      expect((reply.json() as { message: string }).message, path).toContain(message)
    }
    await refused(`/api/console/scopes/${SCOPE}/joborders?limit=0`, "limit")
    await refused(`/api/console/scopes/${SCOPE}/joborders?limit=501`, "limit")
    await refused(`/api/console/scopes/${SCOPE}/joborders?cursor=-1`, "cursor")
    await refused("/api/console/events?max=abc", "max")
    await refused("/api/console/events?after=1-0", "after needs scope")
    await refused(`/api/console/events?scope=${SCOPE}&after=nope`, "after")
    const missing = await island.get(`/api/console/jobs/${encodeURIComponent("<i>none</i>")}`, auth)
    expect(missing.status).toBe(404)
    expect(missing.json()).toEqual({ error: "not-found", message: "job order <i>none</i> does not exist" })
  })

  it("the live feed pushes a change of the scope, and a job order's page filter finds it", async () => {
    const response = await fetch(`http://127.0.0.1:${island.port}/api/console/events?scope=${SCOPE}`, { headers: auth })
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    const id = "jo-console-feed-01"
    const seen = readEvents(response, (events) => events.some((e) => e.type === "change" && (e.data as { id?: string }).id === id))
    // The feed takes its cursor before it answers: a write after the answer is new to it.
    await Effect.runPromise(putJobOrder(SCOPE, { JobOrderID: id }, { state: JobStates.NotAllowedToStart_Ready, change: "Store" }).pipe(Effect.provide(store)))
    const { events } = await seen
    expect(events[0]?.type).toBe("hello")
    expect(events.find((e) => e.type === "change")?.data).toMatchObject({ scope: SCOPE, kind: "joborder", id, change: "Store", version: 1 })
    const listed = await island.get(`/api/console/scopes/${SCOPE}/joborders?state=NotAllowedToStart_Ready`, auth)
    expect((listed.json() as { items: ReadonlyArray<{ id: string; state: string }> }).items).toContainEqual(expect.objectContaining({ id, state: "NotAllowedToStart_Ready" }))
    const found = await island.get(`/api/console/scopes/${SCOPE}/joborders?id=${id}`, auth)
    expect((found.json() as { items: ReadonlyArray<{ id: string }> }).items.map((i) => i.id)).toEqual([id])
  })

  it("the configuration page's recipe digest is the catalogue's, its trigger list is served, an id search shows the job's priority", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        yield* putWorkMaster(SCOPE, fixture("work-master-axle.json"))
        yield* Effect.flatMap(TriggerStore, (triggers) => triggers.put({ id: "t-console", scope: SCOPE, type: "com.example.bin.empty.v1", workMasterId: "wm-axle-v1" }))
        yield* putJobOrder(SCOPE, { JobOrderID: "jo-console-prio", Priority: 7 }, { state: JobStates.NotAllowedToStart_Ready, change: "Store" })
      }).pipe(Effect.provide(store))
    )
    const body = <A>(path: string) => island.get(path, auth).then((reply) => {
      expect(reply.status, path).toBe(200)
      return reply.json() as A
    })
    type Config = { scopes: ReadonlyArray<{ scope: string; workMasters: ReadonlyArray<{ id: string; digest: string | null }> }> }
    const config = await body<Config>("/api/console/config")
    const recipes = await body<{ items: ReadonlyArray<{ workMasterId: string; digest: string }> }>(`/api/recipes?scope=${SCOPE}`)
    const shown = config.scopes.find((s) => s.scope === SCOPE)!.workMasters.find((w) => w.id === "wm-axle-v1")!.digest
    expect(shown).toMatch(/^[0-9a-f]{64}$/)
    expect(shown).toBe(recipes.items.find((r) => r.workMasterId === "wm-axle-v1")!.digest)
    // Every list the configuration page asks for besides its own view is served.
    const triggers = await body<{ items: ReadonlyArray<{ id: string }>; unreadable: ReadonlyArray<unknown> }>("/api/triggers")
    expect([triggers.items.map((t) => t.id), triggers.unreadable]).toEqual([["t-console"], []])
    expect((await island.get("/api/triggers")).status).toBe(401)
    await body("/api/journals")
    const found = await body<{ items: ReadonlyArray<{ id: string; priority: number }> }>(`/api/console/scopes/${SCOPE}/joborders?id=jo-console-prio`)
    expect(found.items).toEqual([expect.objectContaining({ id: "jo-console-prio", priority: 7 })])
  })

  it("shows a job response the previous release stored (v1) in the current form, and one that does not decode as stored with its problems", async () => {
    const old = { ID: "jo-console-old-response", JobOrderID: "jo-console-old", StartTime: "2025-05-01T08:00:00.000Z", EndTime: "2025-05-01T08:01:00.000Z", JobState: "Aborted", Data: { fit: { done: true } }, Error: "spindle jammed" }
    const damaged = { ID: "jo-console-bad-response", JobOrderID: "jo-console-bad", JobState: "Finished", Data: [] }
    await Effect.runPromise(
      Effect.gen(function* () {
        const responses = yield* JobResponseDao
        for (const [id, doc] of [["jo-console-old", old], ["jo-console-bad", damaged]] as const) {
          yield* putJobOrder(SCOPE, { JobOrderID: id }, { state: JobStates.Aborted, change: "Abort" })
          yield* responses.put({ id: doc.ID, scope: SCOPE, orderId: id, state: "Aborted", startTime: 1, doc: JSON.stringify(doc), expectedVersion: 0, change: "ResultUpdate" })
        }
      }).pipe(Effect.provide(store))
    )
    const current = {
      JobResponseID: "jo-console-old-response",
      Description: { Text: "spindle jammed", Locale: "en" },
      JobOrderID: "jo-console-old",
      StartTime: old.StartTime,
      EndTime: old.EndTime,
      JobState: toStoredState(JobStates.Aborted),
      JobResponseData: [{ ID: "fit", Value: { done: true } }],
      PersonnelActuals: [],
      EquipmentActuals: [],
      PhysicalAssetActuals: [],
      MaterialActuals: []
    }
    const job = (id: string) => island.get(`/api/console/jobs/${id}`, auth).then((reply) => (reply.json() as { response: Record<string, unknown> }).response)
    expect(await job("jo-console-old")).toEqual({ id: old.ID, state: "Aborted", version: 1, document: current, problems: null })
    expect(await job("jo-console-bad")).toEqual({
      id: damaged.ID,
      state: "Aborted",
      version: 1,
      document: damaged,
      problems: ["StartTime: Missing key", "EndTime: Missing key", "JobState: Expected a normalized job state name such as Ended_Completed", "Data: Expected object"]
    })
    const listed = (await island.get(`/api/scopes/${SCOPE}/jobresponses?state=Aborted`, auth)).json() as { items: ReadonlyArray<{ id: string; document: unknown; problems: unknown }> }
    expect([...listed.items].sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: damaged.ID, version: 1, document: damaged, problems: expect.arrayContaining(["Data: Expected object"]) },
      { id: old.ID, version: 1, document: current, problems: null }
    ])
  })

  it("a live feed ends as soon as the daemon stops, and the daemon stops cleanly", async () => {
    const response = await fetch(`http://127.0.0.1:${island.port}/api/console/events?figures=1`, { headers: auth })
    const hello = readEvents(response, () => false)
    const stopping = island.stop("SIGTERM")
    // The feed ends when the island stops, before the daemon has drained and exited.
    expect(await Promise.race([hello.then(() => "feed ended"), island.exited.then(() => "daemon exited")])).toBe("feed ended")
    const exit = await stopping
    expect(exit.code, island.stderr()).toBe(0)
    const { ended, events } = await hello
    expect(ended).toBe(true)
    expect(events[0]?.type).toBe("hello")
  }, 40_000)
})
