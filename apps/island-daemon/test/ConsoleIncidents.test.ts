import { Effect, Layer, ManagedRuntime } from "effect"
import { beforeAll, describe, expect, inject, it } from "vitest"
import { makeSimulatedStation } from "@microdcs/island-mqtt"
import { ConfigEventTypes } from "@microdcs/job-control"
import { MethodEventTypes } from "@microdcs/job-state"
import { ConsumerHeartbeats, ScopeRegistry, SfcStateDao, storeLayer, Valkey, ValkeyStreams } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { decodeCursor, encodeCursor, type Incident, type IncidentPosition, mergeIncidents, sourceCursor } from "../src/ConsoleIncident.js"
import { incidentPage } from "../src/ConsoleIncidents.js"
import { incidentQuery } from "../src/HttpConsoleIncidents.js"
import { hasChromium, waitText } from "./BrowserKit.js"
import { consoleIsland, type IslandServices } from "./ConsoleIsland.js"
import { until } from "./DaemonProcess.js"
import { axleJobOrder, configureAxleStation, fixture, makeMes, SCOPE } from "./IslandKit.js"

/**
 * The incident view on a real island: a job the station fails (aborted, with the engine's reason),
 * a dead letter, a consumer gone with an entry pending and one holding an entry too long, read
 * through `GET /api/console/incidents` and on the page in Chromium.
 */

const FAILING = "jo-incident-fail-01"
const RETRYING = "jo-incident-retry-01"
const REASON = "spindle <b>jammed</b>"
const WAIT_MS = 30_000

const kit = consoleIsland({ name: "incidents", file: "ConsoleIncidents", withoutBrowser: true })
const { run } = kit
type Services = IslandServices

interface Page {
  readonly items: ReadonlyArray<Incident>
  readonly next: string | null
}

const incidents = async (search = "") => {
  const reply = await kit.island.get(`/api/console/incidents${search}`)
  expect(reply.status, reply.text).toBe(200)
  return reply.json() as Page
}

/** A change entry read by `consumer` of `group` and left pending. */
const pendingEntry = (group: string, consumer: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const streams = yield* ValkeyStreams
    const stream = yield* valkey.key("changes", { scope: SCOPE })
    yield* streams.ensureGroup(stream, group, "0")
    const batches = yield* streams.readGroup({ streams: [stream], group, consumer, count: 1 })
    return { stream, entry: batches[0]!.entries[0]! }
  })

/** The axle recipe (v1.1.0) whose first command is tried again after a long back-off: its job keeps running with a failed action. */
const retryingWorkMaster = () => {
  const wm = fixture("work-master-axle.json") as { ID: string; data: { Actions: Array<Record<string, unknown>> } }
  const actions = wm.data.Actions.map((a) => (a["Name"] === "position" ? { ...a, Retry: { MaxAttempts: 5, InitialIntervalSeconds: 600 } } : a))
  return { ...wm, ID: "wm-axle-retry", dataschema: "https://aschamberger.github.io/schemas/microdcs/sfc-recipe/v1.1.0/", data: { ...wm.data, Actions: actions } }
}

beforeAll(async () => {
  await run(
    Effect.gen(function* () {
      yield* makeSimulatedStation({
        url: kit.broker.url,
        topics: { prefix: kit.prefix, wildcardLevels: 1 },
        source: "urn:test:station-incidents",
        onCommand: (command) => (command.action === "position" ? { error: REASON } : { data: { done: command.action } }),
        events: {},
        eventPollMs: 20
      })
      const mes = yield* makeMes(kit.broker.url, kit.prefix)
      yield* configureAxleStation(mes)
      yield* mes.ok(MethodEventTypes.Store, { JobOrder: axleJobOrder(FAILING) })
      yield* mes.ok(MethodEventTypes.Start, { JobOrderID: FAILING })
      yield* mes.ok(ConfigEventTypes.workmaster, retryingWorkMaster())
      yield* mes.ok(MethodEventTypes.Store, { JobOrder: { ...axleJobOrder(RETRYING), WorkMasterID: [{ ID: "wm-axle-retry" }] } })
      yield* mes.ok(MethodEventTypes.Start, { JobOrderID: RETRYING })
    }) as Effect.Effect<void, unknown, Services>
  )
  // A dead letter, a consumer that died with an entry pending, and a live one holding an entry for two minutes.
  await run(
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const probe = yield* pendingEntry("incident-probe", "probe-1")
      const deadLetter = yield* streams.deadLetterKey("changes", SCOPE)
      yield* streams.deadLetter({ ...probe, deadLetter, group: "incident-probe", consumer: "probe-1", id: probe.entry.id, error: "probe: <i>could not</i> handle it" })
      yield* pendingEntry("incident-ghosts", "ghost-1")
      const held = yield* pendingEntry("incident-slow", "slow-1")
      const beat = yield* Effect.flatMap(ConsumerHeartbeats, (h) => h.of({ kind: "changes", group: "incident-slow", consumer: "slow-1" }, 600_000))
      yield* beat.beat
      const valkey = yield* Valkey
      yield* unsafeCommand(valkey, "xclaim", (c) => c.call("XCLAIM", held.stream, "incident-slow", "slow-1", 0, held.entry.id, "IDLE", 120_000))
    }) as Effect.Effect<void, unknown, Services>
  )
}, 90_000)

describe("incident cursors and the merge", () => {
  const item = (at: number, kind: Incident["kind"], id: string): Incident => ({
    kind, scope: "s", id, at, title: id, reason: "", action: { kind: "clear", target: {}, label: "" }, link: "/"
  })
  it("merges newest first, ties by kind, scope and id, and resumes after a cursor", () => {
    const lists = [[item(3, "aborted-job", "a"), item(1, "aborted-job", "b")], [item(3, "dead-letter", "c"), item(2, "lost-lease", "d")]]
    expect(mergeIncidents(lists, undefined, 3).map((i) => i.id)).toEqual(["c", "a", "d"])
    const cursor = decodeCursor(encodeCursor(item(3, "aborted-job", "a")))
    expect(mergeIncidents(lists, cursor, 3).map((i) => i.id)).toEqual(["d", "b"])
  })
  it("pages through ties of one millisecond across kinds and scopes, every item once, each source read from its own cursor", () => {
    const items = ["s1", "s2"].flatMap((scope) =>
      (["aborted-job", "dead-letter"] as const).flatMap((kind) => ["a", "b", "c"].map((id) => ({ ...item(5, kind, id), scope })))
    )
    // A source answers as the store's failed set does: older than `at`, or as old with a smaller id.
    const source = (kind: string, scope: string, cursor: IncidentPosition | undefined) => {
      const from = sourceCursor(cursor, kind as Incident["kind"], scope)
      return items.filter((i) => i.kind === kind && i.scope === scope && (from === undefined || i.at < from.at || (i.at === from.at && i.id < from.id)))
    }
    const seen: Array<string> = []
    let cursor: IncidentPosition | undefined
    for (let page = 0; page < 20; page++) {
      const lists = ["s1", "s2"].flatMap((scope) => ["aborted-job", "dead-letter"].map((kind) => source(kind, scope, cursor)))
      const [next] = mergeIncidents(lists, cursor, 1)
      if (next === undefined) break
      seen.push(`${next.kind}/${next.scope}/${next.id}`)
      cursor = decodeCursor(encodeCursor(next))
    }
    expect(seen).toHaveLength(items.length)
    expect(new Set(seen).size).toBe(items.length)
    expect(seen[0]).toBe("dead-letter/s2/c")
  })

  it("refuses a bad query, naming every problem", () => {
    const query = new URLSearchParams({ kind: "aborted-job,nonsense", limit: "0", after: "garbage", scope: "x".repeat(600) })
    const problems = incidentQuery(query) as ReadonlyArray<string>
    expect(problems).toEqual([
      "kind 'nonsense' is not one of aborted-job, failed-action, dead-letter, held-request, lost-lease",
      expect.stringContaining("scope"),
      "limit must be an integer from 1 to 200",
      "after must be the next cursor of a previous page"
    ])
  })
})

describe("a timer sweep gone", () => {
  it("is a lost lease while jobs are active, and none without active jobs", async () => {
    const alone = ManagedRuntime.make(Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix: randomPrefix("incidents-sweep") })))
    const page = () => alone.runPromise(incidentPage({ kinds: new Set(["lost-lease"]), scope: "s", cursor: undefined, limit: 10 }))
    try {
      expect((await page()).items).toEqual([])
      // A job the engine left active, and no sweep ever ran on this island.
      await alone.runPromise(Effect.gen(function* () {
        const valkey = yield* Valkey
        const active = yield* valkey.key("sfcActive", { scope: "s" })
        yield* unsafeCommand(valkey, "sadd", (c) => c.sadd(active, "j-1"))
      }))
      expect((await page()).items).toEqual([
        expect.objectContaining({ kind: "lost-lease", scope: "s", id: "sfc/timer-sweep", reason: "the timer sweep never wrote its heartbeat; the deadlines and back-offs of 1 active jobs wait" })
      ])
    } finally {
      await alone.dispose()
    }
  })
})

describe("the incident view on a real island", () => {
  it("lists the aborted job with the engine's reason, the dead letter, the lost consumer and the held entry, newest first", async () => {
    const page = await until("the aborted job listed", async () => {
      const p = await incidents()
      return p.items.some((i) => i.kind === "aborted-job") ? p : undefined
    }, WAIT_MS)
    const aborted = page.items.find((i) => i.kind === "aborted-job")!
    expect(aborted).toMatchObject({ scope: SCOPE, title: `Job ${FAILING} aborted`, link: `/console/jobs/${FAILING}`, action: { kind: "clear", target: { scope: SCOPE, jobId: FAILING } } })
    expect(aborted.reason).toContain(REASON)
    expect(page.items.find((i) => i.kind === "dead-letter")).toMatchObject({ reason: "probe: <i>could not</i> handle it", action: { kind: "redrive" } })
    expect(page.items.find((i) => i.kind === "lost-lease")?.id).toBe("changes/incident-ghosts/ghost-1")
    expect(page.items.find((i) => i.kind === "held-request")?.id).toMatch(/^changes\/incident-slow\/\d+-\d+$/)
    expect(page.items.map((i) => i.at)).toEqual([...page.items.map((i) => i.at)].sort((a, b) => b - a))
    expect(page.items.filter((i) => i.kind === "held-request" || i.kind === "lost-lease").every((i) => i.link === `/console/streams#${SCOPE}`)).toBe(true)
  }, 60_000)

  it("lists the failed action of a job still running, waiting out its back-off, with a retry that sends the next attempt now", async () => {
    const failed = await until("the failed action listed", async () => (await incidents("?kind=failed-action")).items[0], WAIT_MS)
    expect(failed).toMatchObject({
      kind: "failed-action",
      scope: SCOPE,
      id: `${RETRYING}/position/1`,
      title: `Action position of job ${RETRYING} failed, retrying`,
      action: { kind: "retry-action", target: { scope: SCOPE, jobId: RETRYING, action: "position", visit: 1 }, label: "Retry the action now" },
      link: `/console/jobs/${RETRYING}`
    })
    expect(failed.reason).toContain("the next one waits its back-off")
  }, 60_000)

  it("pages with the cursor through every item exactly once, and filters by kind and scope", async () => {
    const all = await incidents("?limit=200")
    const seen: Array<string> = []
    let after: string | null = null
    do {
      const page: Page = await incidents(`?limit=1${after === null ? "" : `&after=${after}`}`)
      seen.push(...page.items.map((i) => `${i.kind}/${i.id}`))
      after = page.next
    } while (after !== null)
    expect(seen).toEqual(all.items.map((i) => `${i.kind}/${i.id}`))
    const dead = await incidents("?kind=dead-letter,aborted-job")
    expect(new Set(dead.items.map((i) => i.kind))).toEqual(new Set(["dead-letter", "aborted-job"]))
    expect((await incidents("?scope=elsewhere")).items).toEqual([])
  })

  it("answers 400 listing every problem of a bad query", async () => {
    const reply = await kit.island.get("/api/console/incidents?kind=bogus&limit=9999&after=zz")
    expect(reply.status).toBe(400)
    const message = (reply.json() as { message: string }).message
    for (const part of ["kind 'bogus'", "limit must be", "after must be"]) expect(message).toContain(part)
  })

  it("reads no engine state of a job that is over; every read is bounded", async () => {
    const active = await run(Effect.flatMap(SfcStateDao, (d) => d.listActive(SCOPE)) as Effect.Effect<ReadonlyArray<string>, unknown, Services>)
    expect(active).not.toContain(FAILING)
    expect(active).toContain(RETRYING)
    const scopes = await run(Effect.flatMap(ScopeRegistry, (r) => r.list) as Effect.Effect<ReadonlyArray<string>, unknown, Services>)
    expect(scopes).toContain(SCOPE)
  })
})

describe.skipIf(!hasChromium)("the incident page in a browser", () => {
  it("shows the aborted job with its reason and the dead letter, as text, with dated times", async () => {
    await until("the aborted job listed", async () => ((await incidents("?kind=aborted-job")).items.length > 0 ? true : undefined), WAIT_MS)
    const { page, errors } = await kit.browser.open("/console")
    // The island page counts them.
    await waitText(page, "#incidents", /^\d+\+? incidents$/, WAIT_MS)
    expect(await page.getAttribute("#incidents", "class")).toBe("badge bad")
    await page.click("header a[href='/console/incidents']")
    await page.waitForSelector("tr.incident[data-kind='aborted-job']", { timeout: WAIT_MS })
    const aborted = page.locator("tr.incident[data-kind='aborted-job']")
    expect(await aborted.locator("td.reason").textContent()).toContain(REASON)
    expect(await aborted.locator("td.reason b").count()).toBe(0)
    expect(await aborted.locator(`a[href='/console/jobs/${FAILING}']`).first().textContent()).toBe(`Job ${FAILING} aborted`)
    expect(await aborted.locator("td.action").getAttribute("data-action")).toBe("clear")
    const dead = page.locator("tr.incident[data-kind='dead-letter']").first()
    expect(await dead.locator("td.reason").textContent()).toBe("probe: <i>could not</i> handle it")
    expect(await dead.locator("td:first-child").textContent()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} [+-]\d{2}:\d{2}$/)
    // Live: a new dead letter shows without a reload.
    await run(
      Effect.gen(function* () {
        const streams = yield* ValkeyStreams
        const probe = yield* pendingEntry("incident-live", "live-1")
        const deadLetter = yield* streams.deadLetterKey("changes", SCOPE)
        yield* streams.deadLetter({ ...probe, deadLetter, group: "incident-live", consumer: "live-1", id: probe.entry.id, error: "arrived while watching" })
      }) as Effect.Effect<void, unknown, Services>
    )
    await waitText(page, "tr.incident[data-kind='dead-letter'] td.reason", "arrived while watching", WAIT_MS)
    // The kind filter is the server's.
    await page.selectOption("select[name=kind]", "dead-letter")
    await page.click("form.filters button")
    await page.waitForURL(/kind=dead-letter/)
    await page.waitForSelector("tr.incident", { timeout: WAIT_MS })
    expect(new Set(await page.locator("tr.incident").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-kind"))))).toEqual(new Set(["dead-letter"]))
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)
})
