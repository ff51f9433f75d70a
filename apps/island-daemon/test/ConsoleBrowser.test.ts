import { fileURLToPath } from "node:url"
import { Effect, Scope } from "effect"
import type { Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { makeSimulatedStation } from "@microdcs/island-mqtt"
import { ConfigEventTypes, TRIGGER_CONFIG_EVENT_TYPE } from "@microdcs/job-control"
import { MethodEventTypes } from "@microdcs/job-state"
import { Valkey, ValkeyStreams } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { hasChromium, shot } from "./BrowserKit.js"
import { consoleIsland } from "./ConsoleIsland.js"
import { until } from "./DaemonProcess.js"
import { gatedJobOrder, gatedWorkMaster, MARKUP, markupWorkMaster } from "./ConsoleWorkMasters.js"
import { axleJobOrder, configureAxleStation, makeMes, type Mes, SCOPE } from "./IslandKit.js"

/**
 * The console in a real browser (Debian's chromium driven by playwright-core): a daemon with
 * every role, a simulated station whose pull events the test releases one by one, and the pages
 * as a person sees them. Screenshots go to `test-artifacts/` (UPDATE_CONSOLE_SCREENSHOT=1 also
 * refreshes `docs/console-job.png`).
 */

const DOCS_SCREENSHOT = fileURLToPath(new URL("../../../docs/console-job.png", import.meta.url))
const WAIT_MS = 20_000

/** The pull events the station sends (by type); every other one waits for the test to open its gate. */
const open = new Set<string>()
const GATED = ["position", "tighten", "retighten"].map((a) => `com.example.test.${a}.v1`)
/** Per job: the torque check waits (`hold`), fails once, or passes (any job not named here). */
const torque = new Map<string, "hold" | "fail-once" | "pass">()
const torqueChecks = new Map<string, number>()

let mes: Mes
const kit = consoleIsland({ name: "console", instanceId: "console-1", file: "ConsoleBrowser" })
const { prefix } = kit
const run = <A, E>(effect: Effect.Effect<A, E, Valkey | ValkeyStreams | Scope.Scope | never>) => kit.run(effect)

beforeAll(async () => {
  if (!hasChromium) return
  await run(
    Effect.gen(function* () {
      yield* makeSimulatedStation({
        url: kit.broker.url,
        topics: { prefix, wildcardLevels: 1 },
        source: "urn:test:station-console",
        // Long enough that a person (and the test) sees each command dispatched with its correlation id.
        onCommand: (command) => ({ data: { done: command.action }, delayMs: 5_000 }),
        events: {
          "com.example.station.qa.v1": () => (open.has("com.example.station.qa.v1") ? { passed: true } : undefined),
          ...Object.fromEntries(GATED.map((type) => [type, () => (open.has(type) ? { done: true } : undefined)])),
          "com.example.station.torque.v1": (jobId) => {
            const phase = torque.get(jobId) ?? "pass"
            if (phase === "hold") return undefined
            torqueChecks.set(jobId, (torqueChecks.get(jobId) ?? 0) + 1)
            if (phase === "fail-once") {
              torque.set(jobId, "hold")
              return { torque_ok: false, torque_nm: 78 }
            }
            return { torque_ok: true, torque_nm: 85 }
          }
        },
        eventPollMs: 20
      })
      mes = yield* makeMes(kit.broker.url, prefix)
      yield* configureAxleStation(mes)
      yield* mes.ok(ConfigEventTypes.workmaster, markupWorkMaster())
      yield* mes.ok(ConfigEventTypes.workmaster, gatedWorkMaster())
    }) as Effect.Effect<void, unknown, never>
  )
}, 90_000)

/** A page that fails the test on a script error (an escaped `<script>` never runs; a broken page shows here). */
const openPage = (path: string) => kit.browser.open(path)

const stateOf = (page: Page, id: string) => page.locator(`tr[data-job="${id}"] td.state`).textContent()

const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`)
/** Waits until an element matching `selector` shows exactly `text`. */
const waitText = (page: Page, selector: string, text: string) => page.locator(selector).filter({ hasText: exactly(text) }).first().waitFor({ timeout: WAIT_MS })
/** Waits until `selector` matches exactly `count` elements. */
const waitCount = async (page: Page, selector: string, count: number) => {
  const deadline = Date.now() + WAIT_MS
  while ((await page.locator(selector).count()) !== count) {
    if (Date.now() > deadline) throw new Error(`${selector}: not ${count} elements within ${WAIT_MS} ms`)
    await page.waitForTimeout(50)
  }
}

describe.skipIf(!hasChromium)("the console in a browser", () => {
  it("the scope page shows a job moving from state to state, live", async () => {
    const id = "jo-console-scope-01"
    const { page, errors } = await openPage(`/console/scopes/${SCOPE}`)
    await page.waitForSelector("#filters")
    await Effect.runPromise(mes.ok(MethodEventTypes.Store, { JobOrder: axleJobOrder(id) }))
    await waitText(page, `tr[data-job="${id}"] td.state`, "NotAllowedToStart_Ready")
    await shot(page, "scope-stored")
    await Effect.runPromise(mes.ok(MethodEventTypes.Start, { JobOrderID: id }))
    await waitText(page, `tr[data-job="${id}"] td.state`, "Running")
    await shot(page, "scope-running")
    // Its job page: a push command dispatched, with its correlation id and attempt.
    const job = await openPage(`/console/jobs/${id}`)
    await job.page.locator("#actions tr.action td.mono").filter({ hasText: /^[0-9a-f]{8}-[0-9a-f-]{27}$/ }).first().waitFor({ timeout: WAIT_MS })
    expect(await job.page.locator("#actions tr.action.dispatched").count()).toBeGreaterThan(0)
    await shot(job.page, "job-dispatched")
    expect(job.errors).toEqual([])
    await job.page.close()
    // The filter and the search are answered by the server.
    await page.selectOption("#state-filter", "Running")
    await until("only Running job orders listed", async () => {
      const states = await page.locator("tr[data-job] td.state").allTextContents()
      return states.length > 0 && states.every((s) => s === "Running") ? true : undefined
    }, WAIT_MS)
    await page.locator(`tr[data-job="${id}"]`).waitFor({ timeout: WAIT_MS })
    await page.selectOption("#state-filter", "Ended_Completed")
    await page.waitForSelector("#job-orders p.empty", { timeout: WAIT_MS })
    await page.selectOption("#state-filter", "")
    await page.fill("#job-search", id)
    await page.press("#job-search", "Enter")
    await waitCount(page, "tr[data-job]", 1)
    await page.locator(`tr[data-job="${id}"]`).waitFor({ timeout: WAIT_MS })
    expect(await stateOf(page, id)).toBe("Running")
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("the job page lights the active step, then the next, and counts the loop's visits", async () => {
    const id = "jo-console-job-01"
    torque.set(id, "hold")
    const { page, errors } = await openPage(`/console/jobs/${id}`)
    await page.waitForSelector("#job-problem")
    await Effect.runPromise(mes.ok(MethodEventTypes.StoreAndStart, { JobOrder: gatedJobOrder(id) }))
    const lit = (step: string) => page.waitForSelector(`g.step.active[data-step="${step}"]`, { timeout: WAIT_MS })
    const unlit = (step: string) => page.waitForSelector(`g.step[data-step="${step}"]:not(.active)`, { timeout: WAIT_MS })
    await lit("Positioning")
    await lit("QaCheck")
    expect(await page.textContent("#job-state")).toBe("Running")
    await shot(page, "job-positioning")
    // The execution log tree: the running execution's open node is marked.
    await page.locator("#log-tree li.open").first().waitFor({ timeout: WAIT_MS })
    const rowsEarly = await page.locator("#log-tree li").count()
    await waitText(page, 'tr[data-action="position"] td.state', "waiting")
    open.add("com.example.test.position.v1")
    await lit("TightenBolts")
    await unlit("Positioning")
    await lit("QaCheck")
    await shot(page, "job-tighten")
    open.add("com.example.test.tighten.v1")
    await unlit("TightenBolts")
    // The branch joins only when both paths are done: QaCheck still holds it.
    await lit("QaCheck")
    open.add("com.example.station.qa.v1")
    await lit("VerifyTorque")
    await unlit("QaCheck")
    await unlit("TightenBolts")
    await until("the log tree grew", async () => ((await page.locator("#log-tree li").count()) > rowsEarly ? true : undefined), WAIT_MS)
    torque.set(id, "fail-once")
    await lit("TightenBolts_Rework")
    open.add("com.example.test.retighten.v1")
    await page.waitForSelector('g.step.active[data-step="VerifyTorque"] g.visits[data-visits="2"]', { timeout: WAIT_MS })
    expect(await page.textContent('g.step[data-step="VerifyTorque"] g.visits')).toBe("×2")
    await shot(page, "job-loop")
    if (process.env["UPDATE_CONSOLE_SCREENSHOT"] === "1") await page.screenshot({ path: DOCS_SCREENSHOT, fullPage: false })
    torque.set(id, "pass")
    await waitText(page, "#job-state", "Ended_Completed")
    await waitText(page, "#history td.state", "Ended_Completed")
    expect((await page.locator("#history td.state").allTextContents()).filter((t) => t !== "")).toEqual(["AllowedToStart_Ready", "Running", "Ended_Completed"])
    expect(await page.textContent("#execution-status")).toBe("completed")
    await shot(page, "job-completed")
    expect(errors).toEqual([])
    await page.close()
  }, 90_000)

  it("a dead letter appears on the streams page with its error", async () => {
    const { page, errors } = await openPage("/console/streams")
    await page.waitForSelector(`section[data-stream="changes:${SCOPE}"]`, { timeout: WAIT_MS })
    expect(await page.locator("tr.dead-letter").count()).toBe(0)
    // A consumer of the change stream gives up on an entry: the store moves it to the dead letters.
    await run(
      Effect.gen(function* () {
        const valkey = yield* Valkey
        const streams = yield* ValkeyStreams
        const stream = yield* valkey.key("changes", { scope: SCOPE })
        yield* streams.ensureGroup(stream, "console-probe")
        const batches = yield* streams.readGroup({ streams: [stream], group: "console-probe", consumer: "probe-1", count: 1 })
        const entry = batches[0]!.entries[0]!
        const deadLetter = yield* streams.deadLetterKey("changes", SCOPE)
        yield* streams.deadLetter({ stream, deadLetter, group: "console-probe", consumer: "probe-1", id: entry.id, error: "probe: <b>could not</b> handle it" })
      }) as Effect.Effect<void, unknown, never>
    )
    await page.waitForSelector("tr.dead-letter td.error", { timeout: WAIT_MS })
    expect(await page.textContent("tr.dead-letter td.error")).toBe("probe: <b>could not</b> handle it")
    // When it moved: the date, the time and the zone, never a bare clock time.
    expect(await page.textContent("tr.dead-letter td:first-child")).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} [+-]\d{2}:\d{2}$/)
    expect(await page.locator("tr.dead-letter td.error b").count()).toBe(0)
    await shot(page, "streams-dead-letter")
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("a recipe name with <script> renders as text on the configuration page; one digest per recipe, the triggers, an unreadable journal", async () => {
    await Effect.runPromise(mes.ok(TRIGGER_CONFIG_EVENT_TYPE, { id: "t-console-browser", type: "com.example.bin.empty.v1", workMasterId: "wm-axle-v1" }))
    // A journal configuration edited by hand into something no writer stores.
    await run(
      Effect.flatMap(Valkey, (v) =>
        unsafeCommand(v, "break", async (c) => {
          await c.hset(`${prefix}:journal:config:${SCOPE}`, "hand-edited", JSON.stringify({ name: "hand-edited", types: [] }))
          await c.sadd(`${prefix}:journal:scopes`, SCOPE)
          await c.publish(`${prefix}:nudge:journal`, SCOPE)
        })
      )
    )
    const { page, errors } = await openPage("/console/config")
    await page.waitForSelector('div[data-work-master="wm-markup"] svg', { timeout: WAIT_MS })
    const step = page.locator(`div[data-work-master="wm-markup"] g.step .step-name`, { hasText: "<script>" })
    expect(await step.textContent()).toBe(MARKUP)
    expect(await page.textContent('div[data-work-master="wm-markup"] .condition')).toBe("x == '<b>'")
    expect(await page.evaluate("typeof window.__pwned")).toBe("undefined")
    expect(await page.locator("main script").count()).toBe(0)
    await page.waitForSelector('div[data-work-master="wm-axle-v1"] g.step[data-step="VerifyTorque"]')
    // The work master's digest is the catalogue's: one recipe, one digest on the page.
    const digest = (await page.textContent('div[data-work-master="wm-axle-v1"] .digest'))!
    expect(digest).toMatch(/^[0-9a-f]{64}$/)
    const catalogued = page.locator('section[data-optional="/api/recipes"] tr').filter({ hasText: "wm-axle-v1" })
    expect(await catalogued.textContent()).toContain(digest)
    await page.locator('section[data-optional="/api/triggers"] td').filter({ hasText: exactly("t-console-browser") }).waitFor({ timeout: WAIT_MS })
    const unreadable = page.locator('section[data-optional="/api/journals"] ul.unreadable li')
    await unreadable.first().waitFor({ timeout: WAIT_MS })
    expect(await unreadable.first().textContent()).toMatch(new RegExp(`^${SCOPE}/hand-edited: stored but not readable, left out: .*types must be a non-empty list`))
    await shot(page, "config")
    const island = await openPage("/")
    await island.page.waitForSelector(`tr[data-scope="${SCOPE}"]`, { timeout: WAIT_MS })
    // The last minutes from the change stream (the completed jobs), and the engine instance seen.
    await island.page.locator(`tr[data-activity="${SCOPE}"]`).filter({ hasText: "console-1 (sfc-engine" }).waitFor({ timeout: WAIT_MS })
    expect(await island.page.textContent(`tr[data-activity="${SCOPE}"]`)).toMatch(/\d+ \/ \d+ ms \(\d+ jobs\)/)
    await shot(island.page, "island")
    expect([...errors, ...island.errors]).toEqual([])
    await page.close()
    await island.page.close()
  }, 60_000)
})
