import { Effect, Scope } from "effect"
import type { Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { MethodEventTypes } from "@microdcs/job-state"
import { ARTIFACTS, hasChromium } from "./BrowserKit.js"
import { consoleIsland } from "./ConsoleIsland.js"
import { until } from "./DaemonProcess.js"
import { axleJobOrder, axleStation, configureAxleStation, makeMes, type Mes, SCOPE } from "./IslandKit.js"

/**
 * The history charts and the times in a real browser (Debian's chromium, in Berlin's zone so the
 * local time and UTC differ): the island page's charts fill in live as jobs run (no reload), the
 * window and scope can be picked, the scope page has its own, and every time shows date, time
 * and zone with the UTC instant on hover.
 */

const WAIT_MS = 30_000
const JOBS = ["jo-chart-01", "jo-chart-02", "jo-chart-03"]
const LOCAL_TIME = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}\.\d{3}) ([+-]\d{2}:\d{2})$/
const UTC_TITLE = /^UTC (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)$/

let mes: Mes
const kit = consoleIsland({ name: "console-history", file: "ConsoleHistory", timezoneId: "Europe/Berlin" })

beforeAll(async () => {
  if (!hasChromium) return
  await kit.run(
    Effect.gen(function* () {
      yield* axleStation(kit.broker.url, kit.prefix)
      mes = yield* makeMes(kit.broker.url, kit.prefix)
      yield* configureAxleStation(mes)
    }) as Effect.Effect<void, unknown, Scope.Scope>
  )
}, 90_000)

/** A number attribute of the chart `id` once `ok` holds for it. */
const chartOnce = (page: Page, id: string, attribute: string, ok: (n: number) => boolean) =>
  until(`${id} ${attribute}`, async () => {
    const value = Number(await page.locator(`#${id}`).getAttribute(attribute, { timeout: 1_000 }).catch(() => null))
    return ok(value) ? value : undefined
  }, WAIT_MS)

/** The local form and the UTC on hover name the same instant. */
const sameInstant = (local: string, title: string) => {
  const l = LOCAL_TIME.exec(local)
  const u = UTC_TITLE.exec(title)
  expect(l, local).not.toBeNull()
  expect(u, title).not.toBeNull()
  expect(Date.parse(`${l![1]}T${l![2]}${l![3]}`)).toBe(Date.parse(u![1]!))
}

describe.skipIf(!hasChromium)("the history charts in a browser", () => {
  it("the island page draws jobs per minute and run times, filling in live as jobs run; window and scope can be picked", async () => {
    const { page, errors } = await kit.browser.open("/console")
    await page.waitForSelector("#chart-rates")
    expect(await page.locator("#chart-run-times").getAttribute("data-points")).toBe("0")
    for (const id of JOBS) await Effect.runPromise(mes.ok(MethodEventTypes.StoreAndStart, { JobOrder: axleJobOrder(id) }))
    // No reload: the live feed's change events read the history again.
    await chartOnce(page, "chart-run-times", "data-points", (n) => n > 0)
    await chartOnce(page, "chart-rates", "data-nonzero", (n) => n > 0)
    expect(await page.locator("#chart-rates rect.hover").count()).toBe(96)
    expect(await page.locator("#chart-rates path.line").count()).toBe(3)
    // The axis ends: local time with date and zone, UTC on hover.
    const axis = page.locator("#chart-rates text.axis").filter({ has: page.locator("title") }).first()
    sameInstant((await axis.evaluate((e) => e.lastChild?.textContent ?? ""))!, (await axis.locator("title").textContent())!)
    const column = (await page.locator("#chart-rates rect.hover title").last().textContent())!
    expect(column).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} \+01:00 \(UTC \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\), 15 min\nstarted: /)

    await page.selectOption("#history-window", "1h")
    await until("the 1 h window", async () => ((await page.locator("#chart-rates rect.hover").count()) === 60 ? true : undefined), WAIT_MS)
    await chartOnce(page, "chart-run-times", "data-points", (n) => n > 0)
    await page.selectOption("#history-scope", SCOPE)
    await chartOnce(page, "chart-run-times", "data-points", (n) => n > 0)
    await page.locator("#history-charts").screenshot({ path: `${ARTIFACTS}history-island.png` })
    expect(errors).toEqual([])
  }, 90_000)

  it("the scope page has its own charts", async () => {
    const { page, errors } = await kit.browser.open(`/console/scopes/${SCOPE}`)
    await chartOnce(page, "chart-run-times", "data-points", (n) => n > 0)
    expect(await page.locator("#history-scope").count()).toBe(0)
    expect(errors).toEqual([])
  }, 60_000)

  it("every time on a job page shows date, time and zone, with the UTC instant on hover", async () => {
    const { page, errors } = await kit.browser.open(`/console/jobs/${JOBS[0]}`)
    await page.locator("tr.history time").first().waitFor({ timeout: WAIT_MS })
    const times = await page.locator("time").evaluateAll((all) => all.map((t) => ({ text: t.textContent ?? "", title: t.getAttribute("title") ?? "", datetime: t.getAttribute("datetime") ?? "" })))
    expect(times.length).toBeGreaterThan(3)
    for (const t of times) {
      expect(t.text).toMatch(/ \+01:00$/)
      sameInstant(t.text, t.title)
      expect(`UTC ${t.datetime}`).toBe(t.title)
    }
    expect(errors).toEqual([])
  }, 60_000)
})
