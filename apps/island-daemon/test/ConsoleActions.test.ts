import { Effect } from "effect"
import type { Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { MethodEventTypes } from "@microdcs/job-state"
import { SfcStateDao } from "@microdcs/store"
import { hasChromium, shot, waitText as waitTextWithin } from "./BrowserKit.js"
import { deadLetterCommit, OPERATOR, VIEWER } from "./ConsoleActionKit.js"
import { consoleIsland } from "./ConsoleIsland.js"
import { axleJobOrder, configureAxleStation, eventually, jobOrderOf, makeMes, SCOPE } from "./IslandKit.js"

/**
 * The console's actions in a real browser: a viewer's page has no action controls and the
 * server refuses the viewer's POST anyway; an operator retries an open action (a refusal shows the
 * server's text), pauses, resumes, aborts (asked first, in the page) and clears a running job,
 * and the audit table names `console:alice` with each comment; on the streams page the operator
 * redrives one dead letter, then all (asked first). No station answers: the job's first action
 * stays open. Screenshots go to `test-artifacts/`.
 */

const WAIT_MS = 20_000
const JOB = "jo-ui-001"
const kit = consoleIsland({ name: "console-act", file: "ConsoleActions", tokens: true })

beforeAll(async () => {
  if (!hasChromium) return
  await kit.run(
    Effect.gen(function* () {
      const mes = yield* makeMes(kit.broker.url, kit.prefix)
      yield* configureAxleStation(mes)
      yield* mes.ok(MethodEventTypes.StoreAndStart, { JobOrder: axleJobOrder(JOB) })
      yield* eventually(Effect.map(jobOrderOf(JOB), (o) => (o?.state === "Running" ? o : undefined)), 20_000, "the job runs")
      // The first command sent (its first attempt counted): an operator's retry is then its second.
      yield* eventually(Effect.map(firstSends, (sends) => (sends >= 1 ? sends : undefined)), 20_000, "the first command is sent")
    }).pipe(Effect.scoped)
  )
}, 90_000)

/** How often the job's first action (`position`) has been sent. */
const firstSends = Effect.flatMap(SfcStateDao, (dao) => dao.get(JOB)).pipe(
  Effect.map((doc) => (JSON.parse(doc.doc) as { actions?: ReadonlyArray<{ action: string; attempts: number }> }).actions?.find((a) => a.action === "position")?.attempts ?? 0),
  Effect.orElseSucceed(() => 0)
)

const waitText = (page: Page, selector: string, text: string | RegExp) => waitTextWithin(page, selector, text, WAIT_MS)

/** Writes a comment and clicks a method's button; for a destructive one, the page asks and the test confirms. */
const method = async (page: Page, name: string, comment: string, confirm = false) => {
  await page.fill("#action-comment", comment)
  await page.click(`#action-buttons button[data-method="${name}"]`)
  if (confirm) {
    await waitText(page, "#action-confirm", `${name} job ${JOB}?`)
    await page.click("#action-confirm button.confirm")
  }
  await waitText(page, "#action-status.ok", `${name} done`)
}

describe.skipIf(!hasChromium)("the console acts", () => {
  it("a viewer sees no action controls, and the server refuses the viewer's POST; the token leaves the address", async () => {
    const { page, errors } = await kit.browser.open(`/console/jobs/${JOB}#token=${VIEWER.token}`)
    await waitText(page, "#job-state", "Running")
    expect(page.url()).not.toContain("token")
    expect(await page.evaluate(() => sessionStorage.getItem("island-console-token"))).toBe(VIEWER.token)
    expect(await page.locator("#job-actions").count()).toBe(0)
    expect(await page.locator("button").count()).toBe(0)
    await page.goto(`${kit.base()}/console/streams`)
    await page.locator("h1").filter({ hasText: "Streams" }).waitFor({ timeout: WAIT_MS })
    expect(await page.locator("button").count()).toBe(0)
    // The page's own origin: the refusal is the role's, not the same-origin check's.
    const refused = await page.evaluate(async ([id, token]) => {
      const r = await fetch(`/api/console/jobs/${id}/actions/Abort`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" })
      return { status: r.status, body: (await r.json()) as unknown }
    }, [JOB, VIEWER.token] as const)
    expect(refused).toEqual({ status: 403, body: { error: "forbidden", message: "bob is a viewer: actions need an operator's token" } })
    await shot(page, "actions-viewer")
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("an operator retries an open action, pauses, resumes, aborts (asked first) and clears the job; the audit table names console:alice", async () => {
    const { page, errors } = await kit.browser.open(`/console/jobs/${JOB}#token=${OPERATOR.token}`)
    await waitText(page, "#acting-user", "console:alice")
    expect(page.url()).not.toContain("token")
    expect(await page.locator("#action-buttons button").allTextContents()).toEqual(["Pause", "Stop", "Abort"])

    // A retry without a comment: the server's refusal, shown as its text; then with one.
    await page.fill("#action-comment", "")
    await page.click('button[data-retry="position"]')
    await page.click("#action-confirm button.confirm")
    await waitText(page, "#action-status.problem", "400: say why in the comment")
    await page.fill("#action-comment", "station back")
    await page.click('button[data-retry="position"]')
    await page.click("#action-confirm button.confirm")
    // The answer, whichever it is: a refusal fails here with the server's text, not a timeout.
    await page.locator("#action-status.ok, #action-status.problem").first().waitFor({ timeout: WAIT_MS })
    expect(await page.locator("#action-status").textContent()).toBe("retry position: attempt 2")

    await method(page, "Pause", "tool change")
    await waitText(page, "#execution-status", "paused")
    await waitText(page, "#action-buttons", "Resume")
    await shot(page, "actions-paused")
    await method(page, "Resume", "tool fitted")
    await waitText(page, "#execution-status", "running")

    // Abort asks first: nothing is sent until Confirm.
    await page.fill("#action-comment", "scrap it")
    await page.click('#action-buttons button[data-method="Abort"]')
    await waitText(page, "#action-confirm", `Abort job ${JOB}?`)
    await page.waitForTimeout(300)
    expect(await page.locator("#job-state").textContent()).toBe("Running")
    await shot(page, "actions-confirm-abort")
    await page.click("#action-confirm button.confirm")
    await waitText(page, "#action-status.ok", "Abort done")
    await waitText(page, "#execution-status", "aborted")
    await waitText(page, "#audit tr.audit", "scrap it")
    const audit = await page.locator("#audit tr.audit").evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll("td")].slice(1).map((td) => td.textContent)))
    expect(audit.map(([what, by, , comment]) => [what, by, comment])).toEqual([
      ["StoreAndStart", "mes:urn:test:mes", ""],
      ["retry position", "console:alice", "station back"],
      ["Pause", "console:alice", "tool change"],
      ["Resume", "console:alice", "tool fitted"],
      ["Abort", "console:alice", "scrap it"]
    ])
    for (const row of audit.slice(1)) expect(row[2]).toMatch(/127\.0\.0\.1$/)
    await shot(page, "actions-aborted")

    await method(page, "Clear", "done with it", true)
    await waitText(page, "#action-buttons", "no method allowed")
    expect(errors).toEqual([])
    await page.close()
  }, 90_000)

  it("an operator redrives one dead letter, then all of the stream (asked first)", async () => {
    const ids = await kit.run(Effect.forEach([1, 2, 3], () => deadLetterCommit(SCOPE)))
    const { page, errors } = await kit.browser.open(`/console/streams#token=${OPERATOR.token}`)
    const row = (id: string) => page.locator(`tr.dead-letter[data-id="${id}"]`)
    await row(ids[0]!).waitFor({ timeout: WAIT_MS })
    await shot(page, "actions-dead-letters")
    await page.click(`button[data-redrive="${ids[0]}"]`)
    await waitText(page, "#streams-status.ok", "redriven 1, skipped 0")
    await row(ids[0]!).waitFor({ state: "detached", timeout: WAIT_MS })
    await page.click(`button[data-redrive-all="dagcommit:${SCOPE}"]`)
    await waitText(page, "#streams-confirm", "Redrive all 2 dead letters")
    await page.click("#streams-confirm button.confirm")
    await waitText(page, "#streams-status.ok", "redriven 2, skipped 0")
    await row(ids[2]!).waitFor({ state: "detached", timeout: WAIT_MS })
    await shot(page, "actions-redriven")
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)
})
