import { Effect } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { encodeJobOrderRecord, type JobState, JobStates } from "@microdcs/job-state"
import { JobOrderDao } from "@microdcs/store"
import { hasChromium } from "./BrowserKit.js"
import { consoleIsland } from "./ConsoleIsland.js"

/**
 * The console's job order search in a real browser (Debian's chromium, as ConsoleBrowser.test.ts
 * drives it): the island-wide page and a scope page's search, with the total, paging and a
 * refused search shown as the server's problem. The job orders are written through the store.
 */

const WAIT_MS = 20_000

const kit = consoleIsland({ name: "console-search-ui", file: "ConsoleSearch", stopSignal: "SIGKILL" })
const url = (path: string) => `${kit.base()}${path}`

const put = (scope: string, id: string, state: JobState, comment?: string) =>
  Effect.flatMap(JobOrderDao, (dao) =>
    dao.put({ id, scope, doc: encodeJobOrderRecord({ JobOrderID: id, Priority: 1, WorkMasterID: [{ ID: "wm-axle" }] }, state, comment), priority: 1, expectedVersion: 0 })
  )

beforeAll(async () => {
  if (!hasChromium) return
  await kit.run(
    Effect.gen(function* () {
      for (let i = 0; i < 55; i++) yield* put("ui-a", `jo-ui-${String(i).padStart(2, "0")}`, JobStates.Running)
      yield* put("ui-b", "jo-<b>bold</b>", JobStates.Aborted, "<i>spindle</i> overload")
      yield* put("ui-b", "jo-ui-b-1", JobStates.AllowedToStart_Ready)
    })
  )
}, 90_000)

describe.skipIf(!hasChromium)("job order search in the console", () => {
  it("searches every scope with a total and pages; filters by state and error text; the text stays text", async () => {
    const page = await kit.browser.context.newPage()
    await page.goto(url("/console/search"))
    await page.locator("#search-total").filter({ hasText: "57 job orders" }).waitFor({ timeout: WAIT_MS })
    expect(await page.locator("#search-table tbody tr").count()).toBe(50)
    await page.click("#search-next")
    // The second page: the last 5 of ui-a, then ui-b's 2 (scope by scope).
    // Polled from the test, not by a function evaluated in the page (the console's CSP allows no eval).
    await expect.poll(() => page.locator("#search-table tbody tr").count(), { timeout: WAIT_MS }).toBe(7)
    await page.selectOption("#search-state", "Aborted")
    await page.fill("#search-error", "SPINDLE")
    await page.click("#search-submit")
    await page.locator("#search-total").filter({ hasText: "1 job order" }).waitFor({ timeout: WAIT_MS })
    const row = page.locator("#search-table tbody tr").first()
    expect(await row.locator("td").nth(1).textContent()).toBe("jo-<b>bold</b>")
    expect(await row.locator("td").nth(7).textContent()).toBe("<i>spindle</i> overload")
    expect(await page.locator("#search-table b, #search-table i").count()).toBe(0)
    expect(page.url()).toContain("state=Aborted")
    await page.close()
  })

  it("shows a refused search as the server's problem, and searches one scope from its page", async () => {
    const page = await kit.browser.context.newPage()
    await page.goto(url("/console/search"))
    await page.fill("#search-createdFrom", "2030-01-02T00:00:00")
    await page.fill("#search-createdTo", "2030-01-01T00:00:00")
    await page.click("#search-submit")
    await page.locator("#search-problem").filter({ hasText: "createdFrom" }).waitFor({ timeout: WAIT_MS })
    await page.goto(url("/console/scopes/ui-b"))
    await page.click("#scope-search summary")
    await page.fill("#search-idPrefix", "jo-ui-b")
    await page.click("#search-submit")
    await page.locator("#search-total").filter({ hasText: "1 job order" }).waitFor({ timeout: WAIT_MS })
    expect(await page.locator("#search-table tbody tr td").nth(1).textContent()).toBe("jo-ui-b-1")
    await page.close()
  })
})
