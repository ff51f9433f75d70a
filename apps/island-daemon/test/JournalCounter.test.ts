import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { type CloudEvent, makeCloudEvent } from "@microdcs/cloudevents-mqtt"
import { makeSimulatedStation, stationEventsTopic } from "@microdcs/island-mqtt"
import { ReturnStatus, MethodEventTypes } from "@microdcs/job-state"
import { JOURNAL_CONFIG_EVENT_TYPE } from "@microdcs/journal"
import { storeLayer, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { dumpKeys, type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"
import { axleJobOrder, configureAxleStation, eventually, fixture, jobOrderOf, makeMes, type Mes, SCOPE } from "./IslandKit.js"

/**
 * The journal in a running daemon, over MQTT end to end: the journal configured with its config
 * CloudEvent (a bad one refused with every problem, nothing stored), the station's torque results
 * journaled on their way to the engine and recalled over HTTP, and a recipe whose transition reads
 * `counter.nok_torque_1h` sending the tool to a check once the counter has reached its limit.
 */

let broker: MosquittoServer
let daemon: DaemonProcess | undefined
const prefix = randomPrefix("jc")
const store = Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))

const TOOL = "nutrunner-3"
const TORQUE = "com.example.station.torque.v1"
const TOOLCHECK = "com.example.station.toolcheck.v1"
/** The first torque check of these jobs is NOK; every other check passes. */
const NOK_FIRST = new Set(["jo-jc-01", "jo-jc-02", "jo-jc-03"])

/** Every journal and counter key of the prefix with its DUMP: equal snapshots mean the journal was not written. */
const journalKeys = Effect.flatMap(Valkey, (v) => unsafeCommand(v, "test", (c) => dumpKeys(c, prefix))).pipe(
  Effect.map((all) => Object.fromEntries(Object.entries(all).filter(([key]) => /^[^:]+:(journal|counter):/.test(key))))
)

const configEvent = (mes: Mes, data: unknown, method?: string) =>
  Effect.flatMap(mes.send(JOURNAL_CONFIG_EVENT_TYPE, data, method === undefined ? {} : { method }), (id) => mes.replyTo(id))

const status = (reply: CloudEvent) => (reply.data as { ReturnStatus?: number }).ReturnStatus

beforeAll(async () => {
  broker = await startMosquitto()
  daemon = await spawnDaemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "jc-1", extra: { JOURNAL_SWEEP_INTERVAL_MS: "500" } }))
  await daemon.waitReady()
}, 60_000)

afterAll(async () => {
  await daemon?.stop("SIGTERM")
  await broker?.stop()
})

describe("the journal in the daemon", () => {
  it.live(
    "a bad configuration event is refused with every problem listed and stores nothing; a good one is taken",
    () =>
      Effect.gen(function* () {
        const mes = yield* makeMes(broker.url, prefix)
        const before = yield* journalKeys
        const bad = yield* configEvent(mes, {
          name: "torque",
          types: [],
          searchKeys: [{ name: "tool" }],
          retention: { maxAge: "soon" },
          compression: "zip",
          counters: [{ name: "nok", searchKey: "nope", window: "1h", resolution: "week", when: "torque_ok &&" }]
        })
        expect(status(bad)).toBe(ReturnStatus.INVALID_REQUEST)
        expect(bad.extensions["mdcserrorkind"]).toBe("JournalConfigInvalid")
        const problems = (bad.data as { Problems: ReadonlyArray<string> }).Problems
        expect(problems.length, problems.join("\n")).toBeGreaterThanOrEqual(6)
        for (const word of ["types", "path", "maxAge", "compression", "resolution", "nope", "when"]) {
          expect(problems.some((p) => p.includes(word)), `a problem names ${word}: ${problems.join(" | ")}`).toBe(true)
        }
        expect(bad.extensions["mdcserrormessage"]).toBe(problems.join("; "))
        const method = yield* configEvent(mes, fixture("journal-torque.json"), "PATCH")
        expect(status(method)).toBe(ReturnStatus.INVALID_REQUEST)
        expect(yield* journalKeys).toEqual(before)

        const good = yield* configEvent(mes, fixture("journal-torque.json"))
        expect(good.data).toEqual({ ReturnStatus: ReturnStatus.NO_ERROR, Journal: "torque", Created: true })
        // A second journal may not take a counter name the scope already has: refused, nothing stored.
        const stored = yield* journalKeys
        const clash = yield* configEvent(mes, { ...fixture("journal-torque.json"), name: "torque-copy" })
        expect(status(clash)).toBe(ReturnStatus.INVALID_REQUEST)
        expect((clash.data as { Problems: ReadonlyArray<string> }).Problems.join(" ")).toContain("nok_torque_1h")
        expect(yield* journalKeys).toEqual(stored)

        const listed = yield* Effect.promise(() => daemon!.get("/api/journals"))
        expect(listed.status).toBe(200)
        expect(listed.json()).toMatchObject({ items: [{ scope: SCOPE, journal: "torque", searchKeys: ["tool", "job"], counters: ["nok_torque_1h", "torque_1h"], entries: 0 }] })
      }).pipe(Effect.scoped, Effect.provide(store)),
    30_000
  )

  it.live(
    "torque results are journaled on their way to the engine, and the recipe sends the tool to a check once its NOK counter reached 3",
    () =>
      Effect.gen(function* () {
        const checks = new Map<string, number>()
        const station = yield* makeSimulatedStation({
          url: broker.url,
          topics: { prefix, wildcardLevels: 1 },
          source: "urn:test:station-7",
          onCommand: (command) => ({ data: { done: command.action }, delayMs: 2 }),
          events: {
            "com.example.station.qa.v1": () => ({ passed: true }),
            [TORQUE]: (jobId) => {
              const n = (checks.get(jobId) ?? 0) + 1
              checks.set(jobId, n)
              const ok = n > 1 || !NOK_FIRST.has(jobId)
              return { tool_id: TOOL, torque_ok: ok, torque_nm: ok ? 85 : 78 }
            }
          },
          eventPollMs: 10
        })
        const mes = yield* makeMes(broker.url, prefix)
        yield* configureAxleStation(mes, fixture("work-master-axle-toolcheck.json"))
        // One job after the other: each NOK is counted before the next job runs.
        for (const id of ["jo-jc-01", "jo-jc-02", "jo-jc-03", "jo-jc-04"]) {
          yield* mes.ok(MethodEventTypes.StoreAndStart, { JobOrder: axleJobOrder(id) })
          yield* eventually(Effect.map(jobOrderOf(id), (o) => (o?.state.startsWith("Ended") || o?.state === "Aborted" ? o : undefined)), 30_000, `${id} ended`)
          expect((yield* jobOrderOf(id))?.state, id).toBe("Ended_Completed")
        }
        // The 1st and 2nd NOK (counter 1, 2) rework at once; the 3rd (counter 3) checks the tool first.
        const toolChecks = station.commands.filter((c) => c.type === TOOLCHECK).map((c) => c.jobId)
        expect(toolChecks).toEqual(["jo-jc-03"])
        expect(station.commands.filter((c) => c.action === "retighten").map((c) => c.jobId)).toEqual(["jo-jc-01", "jo-jc-02", "jo-jc-03"])

        const d = daemon!
        const counter = yield* Effect.promise(() => d.get(`/api/journals/${SCOPE}/torque/counters/nok_torque_1h?value=${TOOL}`))
        expect(counter.status, counter.text).toBe(200)
        expect(counter.json()).toMatchObject({ counter: "nok_torque_1h", searchKey: "tool", value: TOOL, total: 3, window: "1h", resolution: "minute" })
        const all = yield* Effect.promise(() => d.get(`/api/journals/${SCOPE}/torque/counters/torque_1h?value=${TOOL}`))
        expect(all.json()).toMatchObject({ total: 7 })

        // Every torque result is in the journal, newest first; by job too (the `jobid` extension).
        const recalled = yield* Effect.promise(() => d.get(`/api/journals/${SCOPE}/torque/recall?key=tool&value=${TOOL}&limit=100`))
        expect(recalled.status, recalled.text).toBe(200)
        const items = (recalled.json() as { items: ReadonlyArray<{ id: string; time: string; event: { type: string; jobid: string; data: { torque_ok: boolean } } }> }).items
        expect(items).toHaveLength(7)
        expect(items.every((i) => i.event.type === TORQUE)).toBe(true)
        expect(items.filter((i) => !i.event.data.torque_ok).map((i) => i.event.jobid).sort()).toEqual(["jo-jc-01", "jo-jc-02", "jo-jc-03"])
        expect([...items].sort((a, b) => b.time.localeCompare(a.time))).toEqual(items)
        const byJob = yield* Effect.promise(() => d.get(`/api/journals/${SCOPE}/torque/recall?key=job&value=jo-jc-02`))
        expect((byJob.json() as { items: ReadonlyArray<unknown> }).items).toHaveLength(2)
        const limited = yield* Effect.promise(() => d.get(`/api/journals/${SCOPE}/torque/recall?key=tool&value=${TOOL}&limit=2&since=${encodeURIComponent(items[3]!.time)}`))
        expect((limited.json() as { items: ReadonlyArray<{ id: string }> }).items.map((i) => i.id)).toEqual(items.slice(0, 2).map((i) => i.id))

        const shown = yield* Effect.promise(() => d.get(`/api/journals/${SCOPE}/torque`))
        expect(shown.json()).toMatchObject({ scope: SCOPE, name: "torque", entries: 7 })
        const metrics = yield* Effect.promise(() => d.get("/metrics"))
        expect(metrics.text).toMatch(/microdcs_journal_total\{operation="record",outcome="inserted"\} 7/)
        expect(metrics.text).toMatch(/microdcs_journal_total\{operation="config",outcome="refused"\} 3/)
        // The configuration event is a job control type of its own in the message metrics, not `other`.
        expect(metrics.text).toContain(`microdcs_messages_total{kind="jobcontrol",type="${JOURNAL_CONFIG_EVENT_TYPE}",outcome="refused"} 3`)
      }).pipe(Effect.scoped, Effect.provide(store)),
    90_000
  )

  it.live(
    "the HTTP reads answer a bad parameter 400 and a missing journal or counter 404",
    () =>
      Effect.gen(function* () {
        const d = daemon!
        const bad = [
          `/api/journals/${SCOPE}/torque/recall?value=${TOOL}`,
          `/api/journals/${SCOPE}/torque/recall?key=tool`,
          `/api/journals/${SCOPE}/torque/recall?key=tool&value=${TOOL}&limit=0`,
          `/api/journals/${SCOPE}/torque/recall?key=tool&value=${TOOL}&limit=abc`,
          `/api/journals/${SCOPE}/torque/recall?key=tool&value=${TOOL}&since=yesterday`,
          `/api/journals/${SCOPE}/torque/recall?key=station&value=${TOOL}`,
          `/api/journals/${SCOPE}/torque/counters/nok_torque_1h`
        ]
        for (const path of bad) {
          const reply = yield* Effect.promise(() => d.get(path))
          expect(reply.status, `${path}: ${reply.text}`).toBe(400)
          expect(reply.json()).toMatchObject({ error: "bad-request" })
        }
        for (const path of [`/api/journals/${SCOPE}/nothing`, `/api/journals/other/torque/recall?key=tool&value=x`, `/api/journals/${SCOPE}/torque/counters/nothing?value=x`]) {
          const reply = yield* Effect.promise(() => d.get(path))
          expect(reply.status, `${path}: ${reply.text}`).toBe(404)
          expect(reply.json()).toMatchObject({ error: "not-found" })
        }
      }),
    30_000
  )

  it.live(
    "an entry past its retention is journaled and then removed by the daemon's sweep timer",
    () =>
      Effect.gen(function* () {
        const mes = yield* makeMes(broker.url, prefix)
        const legacy = { name: "legacy", types: ["com.example.station.legacy.v1"], searchKeys: [{ name: "tool", path: "data.tool_id" }], retention: { maxAge: "1h", reference: "event" } }
        expect(status(yield* configEvent(mes, legacy))).toBe(ReturnStatus.NO_ERROR)
        // Reported two hours late: journaled (no job waits for it, the engine ignores it), then swept.
        const topic = yield* Effect.fromResult(stationEventsTopic({ prefix, wildcardLevels: 1 }, SCOPE))
        yield* mes.connection.publish(
          topic,
          makeCloudEvent({ source: "urn:test:station-7", type: "com.example.station.legacy.v1", subject: SCOPE, time: new Date(Date.now() - 2 * 3_600_000), data: { tool_id: TOOL } }),
          { qos: 1 }
        )
        const metric = (text: string, operation: string, outcome: string) =>
          Number(new RegExp(`microdcs_journal_total\\{operation="${operation}",outcome="${outcome}"\\} (\\d+)`).exec(text)?.[1] ?? 0)
        yield* eventually(
          Effect.promise(() => daemon!.get("/metrics")).pipe(Effect.map((m) => (metric(m.text, "sweep", "removed") >= 1 && metric(m.text, "record", "inserted") === 8 ? true : undefined))),
          20_000,
          "the late entry journaled and swept"
        )
        const shown = yield* Effect.promise(() => daemon!.get(`/api/journals/${SCOPE}/legacy`))
        expect(shown.json()).toMatchObject({ name: "legacy", entries: 0, bytes: 0 })
        expect((yield* configEvent(mes, { name: "legacy" }, "DELETE")).data).toMatchObject({ Removed: 1 })
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "a DELETE configuration event removes the journal; a second one removes nothing",
    () =>
      Effect.gen(function* () {
        const mes = yield* makeMes(broker.url, prefix)
        expect((yield* configEvent(mes, { name: "torque" }, "DELETE")).data).toEqual({ ReturnStatus: ReturnStatus.NO_ERROR, Journal: "torque", Removed: 1 })
        expect((yield* configEvent(mes, { name: "torque" }, "DELETE")).data).toEqual({ ReturnStatus: ReturnStatus.NO_ERROR, Journal: "torque", Removed: 0 })
        const listed = yield* Effect.promise(() => daemon!.get("/api/journals"))
        expect(listed.json()).toEqual({ items: [], unreadable: [] })
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "a stored configuration the daemon cannot read is reported, not dropped: /api/journals lists it with why, /metrics counts it, its reads say so",
    () =>
      Effect.gen(function* () {
        const d = daemon!
        // Edited by hand: not what any writer of this version stores.
        yield* Effect.flatMap(Valkey, (v) =>
          unsafeCommand(v, "break", async (c) => {
            await c.hset(`${prefix}:journal:config:line-broken`, "torque", JSON.stringify({ name: "torque", types: "all", searchKeys: [] }))
            await c.sadd(`${prefix}:journal:scopes`, "line-broken")
            await c.publish(`${prefix}:nudge:journal`, "line-broken")
          })
        )
        const listed = yield* eventually(
          Effect.promise(() => d.get("/api/journals?scope=line-broken")).pipe(
            Effect.map((r) => r.json() as { items: ReadonlyArray<unknown>; unreadable: ReadonlyArray<{ journal: string; problems: ReadonlyArray<string> }> }),
            Effect.map((body) => (body.unreadable.length > 0 ? body : undefined))
          ),
          20_000,
          "the unreadable configuration listed"
        )
        expect(listed.items).toEqual([])
        expect(listed.unreadable).toEqual([{ scope: "line-broken", journal: "torque", problems: expect.arrayContaining(["types must be a non-empty list of CloudEvent types"]) }])
        const metrics = yield* Effect.promise(() => d.get("/metrics"))
        expect(metrics.text).toContain('microdcs_journal_unreadable{scope="line-broken"} 1')
        const one = yield* Effect.promise(() => d.get("/api/journals/line-broken/torque"))
        expect(one.status).toBe(500)
        expect(one.json()).toMatchObject({ error: "unreadable-config", message: expect.stringContaining("is stored but cannot be read") })
      }).pipe(Effect.provide(store)),
    30_000
  )
})
