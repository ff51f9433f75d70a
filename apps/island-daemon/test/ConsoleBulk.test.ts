import { Effect } from "effect"
import type { Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { MethodEventTypes } from "@microdcs/job-state"
import { hasChromium, shot, waitText as waitTextWithin } from "./BrowserKit.js"
import { OPERATOR, VIEWER } from "./ConsoleActionKit.js"
import { consoleIsland } from "./ConsoleIsland.js"
import { until } from "./DaemonProcess.js"
import { axleJobOrder, configureAxleStation, jobOrderOf, makeMes } from "./IslandKit.js"

/**
 * Bulk actions in a real browser, on the search page: a viewer sees no bulk controls; an
 * operator searches, asks to abort every match, sees the count in the page's question, cancels
 * (nothing sent), asks again and confirms; the progress runs to its end in batches and every
 * job's outcome is listed; then the aborted ones are cleared the same way. The job orders the
 * search does not find are never touched. A retry of every running match needs a comment (the
 * server's refusal shows), then sends each job's open action again.
 */

const WAIT_MS = 30_000
const LINE = Array.from({ length: 130 }, (_, i) => `jo-line-${String(i).padStart(3, "0")}`)
const OTHER = ["jo-other-1", "jo-other-2"]
/** Started with no station answering: each waits on its first action, open for a retry. */
const RUNNING = ["jo-run-1", "jo-run-2"]
const kit = consoleIsland({ name: "console-bulk", file: "ConsoleBulk", tokens: true })
const stateOf = (id: string) => kit.run(jobOrderOf(id)).then((o) => o?.state)

beforeAll(async () => {
  if (!hasChromium) return
  await kit.run(
    Effect.gen(function* () {
      const mes = yield* makeMes(kit.broker.url, kit.prefix)
      yield* configureAxleStation(mes)
      yield* Effect.forEach([...LINE, ...OTHER], (id) => mes.ok(MethodEventTypes.Store, { JobOrder: axleJobOrder(id) }), { concurrency: 8, discard: true })
      yield* Effect.forEach(RUNNING, (id) => mes.ok(MethodEventTypes.StoreAndStart, { JobOrder: axleJobOrder(id) }), { discard: true })
    }).pipe(Effect.scoped)
  )
}, 90_000)

const waitText = (page: Page, selector: string, text: string | RegExp) => waitTextWithin(page, selector, text, WAIT_MS)

/** Asks for a bulk action on the page's search and waits for the page's question. */
const ask = async (page: Page, action: string, question: string) => {
  await page.click(`#bulk button[data-bulk="${action}"]`)
  await waitText(page, "#bulk-confirm", question)
}

describe.skipIf(!hasChromium)("bulk actions from the search page", () => {
  it("a viewer sees the matches and no bulk controls", async () => {
    const { page, errors } = await kit.browser.open(`/console/search?idPrefix=jo-line-#token=${VIEWER.token}`)
    await waitText(page, "#search-total", "130 job orders")
    await page.waitForTimeout(300)
    expect(await page.locator("#bulk button").count()).toBe(0)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("an operator aborts every match after seeing the count (Cancel sends nothing), then clears them; each outcome listed", async () => {
    const { page, errors } = await kit.browser.open(`/console/search?idPrefix=jo-line-#token=${OPERATOR.token}`)
    await waitText(page, "#search-total", "130 job orders")
    await page.fill("#bulk-comment", "line 1 scrapped")

    await ask(page, "abort", "Abort 130 job orders matching this search?")
    await shot(page, "bulk-confirm-abort")
    await page.click("#bulk-confirm button.cancel")
    await page.waitForTimeout(300)
    expect(await stateOf(LINE[0]!)).not.toBe("Aborted")

    await ask(page, "abort", "Abort 130 job orders matching this search?")
    await page.click("#bulk-confirm button.confirm")
    await waitText(page, "#bulk-progress", "Abort: 130 of 130 — 130 done, 0 refused, 0 skipped (finished)")
    expect(await page.locator("#bulk-outcomes-table tbody tr.bulk-done").count()).toBe(130)
    await shot(page, "bulk-aborted")
    for (const id of [LINE[0]!, LINE[129]!]) expect(await stateOf(id)).toBe("Aborted")
    for (const id of OTHER) expect(await stateOf(id)).not.toBe("Aborted")

    await page.selectOption("#search-state", "Aborted")
    await page.click("#search-submit")
    await waitText(page, "#search-total", "130 job orders")
    await ask(page, "clear", "Clear 130 job orders matching this search?")
    await page.click("#bulk-confirm button.confirm")
    await waitText(page, "#bulk-progress", "Clear: 130 of 130 — 130 done, 0 refused, 0 skipped (finished)")
    await waitText(page, "#search-total", "0 job orders")
    expect(errors).toEqual([])
    await page.close()
  }, 120_000)

  it("an operator sends the open actions of every running match again: refused without a comment, done with one", async () => {
    for (const id of RUNNING) await until(`${id} runs`, async () => ((await stateOf(id)) === "Running" ? true : undefined), WAIT_MS)
    const { page, errors } = await kit.browser.open(`/console/search?idPrefix=jo-run-&state=Running#token=${OPERATOR.token}`)
    await waitText(page, "#search-total", "2 job orders")
    await ask(page, "retry", "Send again the open actions of 2 job orders matching this search?")
    await page.click("#bulk-confirm button.confirm")
    await waitText(page, "#bulk-progress", "Retry stopped after 0: 400: say why in the comment")
    await page.fill("#bulk-comment", "station back")
    await ask(page, "retry", "Send again the open actions of 2 job orders matching this search?")
    await page.click("#bulk-confirm button.confirm")
    await waitText(page, "#bulk-progress", "Retry: 2 of 2 — 2 done, 0 refused, 0 skipped (finished)")
    expect(await page.locator("#bulk-outcomes-table tbody tr.bulk-done").allTextContents()).toEqual(
      expect.arrayContaining(RUNNING.map((id) => expect.stringContaining(id)))
    )
    await waitText(page, "#bulk-outcomes-table", "sent again: position")
    await shot(page, "bulk-retried")
    expect(errors).toEqual([])
    await page.close()
  }, 90_000)
})
