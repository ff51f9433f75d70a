import { Effect, Layer, ManagedRuntime } from "effect"
import type { Page } from "playwright-core"
import { beforeAll, describe, expect, inject, it } from "vitest"
import { makeSimulatedStation } from "@microdcs/island-mqtt"
import { ConfigEventTypes } from "@microdcs/job-control"
import { encodeJobOrderRecord, JobStates, MethodEventTypes } from "@microdcs/job-state"
import { JobOrderDao, JobResponseDao, JobResponseFailures, storeLayer } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { decodeCursor, type Incident } from "../src/ConsoleIncident.js"
import { type IncidentPage, incidentPage } from "../src/ConsoleIncidents.js"
import { hasChromium, shot, waitText as waitTextWithin } from "./BrowserKit.js"
import { bearer, deadLetterCommit, OPERATOR, VIEWER } from "./ConsoleActionKit.js"
import { consoleIsland, type IslandServices } from "./ConsoleIsland.js"
import { until } from "./DaemonProcess.js"
import { axleJobOrder, configureAxleStation, fixture, makeMes, SCOPE } from "./IslandKit.js"

/**
 * Each incident's action on the incident page, in Chromium: a viewer sees the links and no
 * controls; an operator clears an aborted job (asked first, in the page) and redrives a dead
 * letter, reads the server's answer as text and sees each incident leave the list. The job aborts
 * because the simulated station fails its `position` command; the dead letter is in the execution
 * log's commit stream, which nothing consumes in these tests (no storage role), so a redriven entry
 * stays where it lands; a second job's first command fails once and its second attempt gets no
 * answer, so the action is open on a later attempt: what a retry is for. Screenshots go to `test-artifacts/`.
 */

const WAIT_MS = 30_000
const FAILING = "jo-incact-fail-01"
const RETRYING = "jo-incact-retry-01"
let deadLetterId: string
let retryingSends = 0
const kit = consoleIsland({ name: "incident-act", file: "ConsoleIncidentActions", tokens: true })
const { run } = kit
type Services = IslandServices

const incidents = async (kind: string): Promise<ReadonlyArray<Incident>> => {
  const reply = await kit.island.get(`/api/console/incidents?kind=${kind}`, bearer(VIEWER.token))
  expect(reply.status, reply.text).toBe(200)
  return (reply.json() as { items: ReadonlyArray<Incident> }).items
}

/** The axle recipe (v1.1.0) whose first command is tried again after a second's back-off. */
const retryingWorkMaster = () => {
  const wm = fixture("work-master-axle.json") as { ID: string; data: { Actions: Array<Record<string, unknown>> } }
  const actions = wm.data.Actions.map((a) => (a["Name"] === "position" ? { ...a, Retry: { MaxAttempts: 5, InitialIntervalSeconds: 1 } } : a))
  return { ...wm, ID: "wm-axle-retry", dataschema: "https://aschamberger.github.io/schemas/microdcs/sfc-recipe/v1.1.0/", data: { ...wm.data, Actions: actions } }
}

beforeAll(async () => {
  if (!hasChromium) return
  deadLetterId = await run(
    Effect.gen(function* () {
      yield* makeSimulatedStation({
        url: kit.broker.url,
        topics: { prefix: kit.prefix, wildcardLevels: 1 },
        source: "urn:test:station-incident-act",
        onCommand: (command) => {
          if (command.action !== "position") return { data: { done: command.action } }
          if (command.jobId !== RETRYING) return { error: "spindle jammed" }
          retryingSends += 1
          return retryingSends === 1 ? { error: "spindle jammed once" } : "silent"
        },
        events: {},
        eventPollMs: 20
      })
      const mes = yield* makeMes(kit.broker.url, kit.prefix)
      yield* configureAxleStation(mes)
      yield* mes.ok(MethodEventTypes.StoreAndStart, { JobOrder: axleJobOrder(FAILING) })
      yield* mes.ok(ConfigEventTypes.workmaster, retryingWorkMaster())
      yield* mes.ok(MethodEventTypes.StoreAndStart, { JobOrder: { ...axleJobOrder(RETRYING), WorkMasterID: [{ ID: "wm-axle-retry" }] } })
      return yield* deadLetterCommit(SCOPE)
    }) as Effect.Effect<string, unknown, Services>
  )
  await until("the aborted job listed", async () => ((await incidents("aborted-job")).length > 0 ? true : undefined), WAIT_MS)
  await until("the failed action open for a retry", async () => ((await incidents("failed-action")).some((i) => i.action.kind === "retry-action") ? true : undefined), WAIT_MS)
}, 90_000)

const waitText = (page: Page, selector: string, text: string | RegExp) => waitTextWithin(page, selector, text, WAIT_MS)

const abortedRow = (page: Page) => page.locator("tr.incident[data-kind='aborted-job']").filter({ hasText: FAILING })
const deadRow = (page: Page) => page.locator(`tr.incident[data-kind='dead-letter'][data-id='dagcommit/${deadLetterId}']`)

describe.skipIf(!hasChromium)("acting on incidents from the incident page", () => {
  it("a viewer sees each incident's link and no action controls", async () => {
    const { page, errors } = await kit.browser.open(`/console/incidents#token=${VIEWER.token}`)
    await abortedRow(page).waitFor({ timeout: WAIT_MS })
    await deadRow(page).waitFor({ timeout: WAIT_MS })
    expect(await page.locator("#incident-actions").count()).toBe(0)
    expect(await page.locator("td.action button").count()).toBe(0)
    expect(await abortedRow(page).locator(`td.action a[href='/console/jobs/${FAILING}']`).textContent()).toBe("Clear the aborted job order")
    await shot(page, "incident-actions-viewer")
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("an operator clears the aborted job, asked first in the page, and it leaves the list", async () => {
    const { page, errors } = await kit.browser.open(`/console/incidents#token=${OPERATOR.token}`)
    await waitText(page, "#acting-user", `console:${OPERATOR.name}`)
    const clear = abortedRow(page).locator("button[data-act='clear']")
    await clear.click()
    await waitText(page, "#incident-confirm", `Clear job ${FAILING}? This cannot be undone.`)
    // Cancel sends nothing.
    await page.click("#incident-confirm button.cancel")
    expect(await page.locator("#incident-confirm button").count()).toBe(0)
    expect((await incidents("aborted-job")).some((i) => i.title.includes(FAILING))).toBe(true)
    await clear.click()
    await page.click("#incident-confirm button.confirm")
    await waitText(page, "#incident-status.ok", `Clear ${FAILING} done`)
    await abortedRow(page).waitFor({ state: "detached", timeout: WAIT_MS })
    expect((await incidents("aborted-job")).some((i) => i.title.includes(FAILING))).toBe(false)
    await shot(page, "incident-actions-cleared")
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("an operator redrives the dead letter, reads the answer, and it leaves the list", async () => {
    const { page, errors } = await kit.browser.open(`/console/incidents?kind=dead-letter#token=${OPERATOR.token}`)
    await deadRow(page).locator("button[data-act='redrive']").click()
    await waitText(page, "#incident-status.ok", `redrive of ${deadLetterId}: back on the stream`)
    await deadRow(page).waitFor({ state: "detached", timeout: WAIT_MS })
    expect((await incidents("dead-letter")).some((i) => i.id === `dagcommit/${deadLetterId}`)).toBe(false)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("an operator retries a failed action only with a comment, and reads the answer", async () => {
    const { page, errors } = await kit.browser.open(`/console/incidents?kind=failed-action#token=${OPERATOR.token}`)
    const row = page.locator("tr.incident[data-kind='failed-action']").filter({ hasText: RETRYING })
    await row.locator("button[data-act='retry-action']").click()
    await waitText(page, "#incident-confirm", `Send action position of job ${RETRYING} to the station again now?`)
    await page.click("#incident-confirm button.confirm")
    await waitText(page, "#incident-status.problem", "a comment is required")
    await page.fill("#incident-comment", "station cleaned, try again")
    await page.click("#incident-confirm button.confirm")
    await waitText(page, "#incident-status.ok", new RegExp(`^retry position of ${RETRYING}: attempt \\d+$`))
    expect(await page.locator("#incident-confirm button").count()).toBe(0)
    await shot(page, "incident-actions-retry")
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)
})

describe("aborted jobs already cleared", () => {
  it("are out of the failed set, so the first page lists the open ones; a drifted entry is left out with a next that goes on", async () => {
    const alone = ManagedRuntime.make(Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix: randomPrefix("incident-act-cleared") })))
    const limit = 2
    // Newest first: many cleared ones (retired with retention, as Clear and Cancel do), then the open ones.
    const cleared = limit * 5 + 2
    const total = cleared + 3
    try {
      await alone.runPromise(Effect.gen(function* () {
        const orders = yield* JobOrderDao
        const responses = yield* JobResponseDao
        yield* Effect.forEach(Array.from({ length: total }, (_, i) => i), (i) => Effect.gen(function* () {
          const id = `jo-c-${String(i).padStart(3, "0")}`
          const doc = (state: Parameters<typeof encodeJobOrderRecord>[1]) => encodeJobOrderRecord({ JobOrderID: id, Priority: 5 } as never, state)
          yield* orders.put({ id, scope: "s", doc: doc(JobStates.Aborted), priority: 5, expectedVersion: 0 })
          yield* responses.put({ id: `${id}-r`, scope: "s", orderId: id, state: "Aborted", endTime: 1_000 + i, doc: "{}", expectedVersion: 0 })
          if (i >= total - cleared) yield* orders.put({ id, scope: "s", doc: doc(JobStates.EndState), priority: 5, expectedVersion: 1, retainMs: 60_000 })
        }), { discard: true })
        expect(yield* Effect.flatMap(JobResponseFailures, (f) => f.count("s"))).toBe(3)
      }))
      const walk = async () => {
        const pages: Array<IncidentPage> = []
        let cursor: string | null = null
        do {
          const page: IncidentPage = await alone.runPromise(incidentPage({ kinds: new Set(["aborted-job"]), scope: "s", cursor: cursor === null ? undefined : decodeCursor(cursor), limit }))
          pages.push(page)
          cursor = page.next
        } while (cursor !== null && pages.length < 10)
        return pages
      }
      const first = await walk()
      expect(first.map((p) => p.items.map((i) => i.id))).toEqual([["jo-c-002-r", "jo-c-001-r"], ["jo-c-000-r"]])
      expect(first.at(-1)?.next).toBeNull()
      // Drift (an order in EndState still listed, its response left in the set): the defensive check leaves it out.
      await alone.runPromise(Effect.flatMap(JobOrderDao, (orders) =>
        orders.put({ id: "jo-c-001", scope: "s", doc: encodeJobOrderRecord({ JobOrderID: "jo-c-001", Priority: 5 } as never, JobStates.EndState), priority: 5, expectedVersion: 1 })
      ))
      const drifted = await walk()
      expect(drifted.flatMap((p) => p.items.map((i) => i.id))).toEqual(["jo-c-002-r", "jo-c-000-r"])
      expect(drifted[0]?.next).not.toBeNull()
      expect(drifted.at(-1)?.next).toBeNull()
    } finally {
      await alone.dispose()
    }
  })
})
