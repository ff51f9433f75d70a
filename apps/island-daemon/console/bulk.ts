import { button, me, post } from "./acts.js"
import { api } from "./api.js"
import { h, jobHref, link, replace, table } from "./dom.js"

/**
 * Bulk actions on a search, for an operator: abort, clear or retry every job order the search
 * finds. The count comes first (`/api/console/search/count`), then a confirmation in the page;
 * the server runs one bounded batch per request (`POST /api/console/bulk/{action}`) and the page
 * follows its cursor to the end, showing the progress and each job's outcome as it comes.
 */

interface Outcome {
  readonly scope: string
  readonly id: string
  readonly outcome: "done" | "refused" | "skipped"
  readonly state?: string | null
  readonly retried?: ReadonlyArray<string>
  readonly message?: string
}

interface Batch {
  readonly outcomes: ReadonlyArray<Outcome>
  readonly next: string | null
}

/** Each bulk action: its route, its name in the progress line, and its button and question's verb. */
const ACTIONS: ReadonlyArray<readonly [action: string, label: string, verb: string]> = [
  ["abort", "Abort", "Abort"],
  ["clear", "Clear", "Clear"],
  ["retry", "Retry", "Send again the open actions of"]
]

/** Job orders per request: a batch answers in well under a second, so progress moves steadily. */
const BATCH = 100

/** What the bar acts with: the search's query now, where the question, progress and outcomes go. */
interface Bar {
  readonly query: () => URLSearchParams
  readonly comment: HTMLInputElement
  readonly confirmBox: HTMLElement
  readonly progress: HTMLElement
  readonly outcomes: HTMLElement
  readonly after: () => void
}

const outcomeRow = (o: Outcome) =>
  h(
    "tr",
    { class: `bulk-${o.outcome}`, "data-job": o.id },
    h("td", {}, o.scope),
    h("td", { class: "mono" }, link(jobHref(o.id), o.id)),
    h("td", {}, o.outcome),
    h("td", {}, o.outcome === "done" ? (o.retried !== undefined ? `sent again: ${o.retried.join(", ")}` : (o.state ?? "")) : (o.message ?? ""))
  )

const tally = (rows: ReadonlyArray<Outcome>, kind: Outcome["outcome"]) => rows.filter((o) => o.outcome === kind).length

/** Runs the batches one after another until the search is done, showing each job's outcome. */
const runAll = async (bar: Bar, query: URLSearchParams, action: string, label: string, total: number) => {
  const rows: Array<Outcome> = []
  const body = { query: query.toString(), batch: BATCH, ...(bar.comment.value.trim() === "" ? {} : { comment: bar.comment.value }) }
  let after: string | null | undefined
  try {
    do {
      const batch: Batch = await post(`/api/console/bulk/${action}`, after === undefined || after === null ? body : { ...body, after })
      rows.push(...batch.outcomes)
      after = batch.next
      replace(bar.progress, `${label}: ${rows.length} of ${total} — ${tally(rows, "done")} done, ${tally(rows, "refused")} refused, ${tally(rows, "skipped")} skipped${after === null ? " (finished)" : "…"}`)
      replace(bar.outcomes, table(["scope", "job order", "outcome", "state or why"], rows.map(outcomeRow), { id: "bulk-outcomes-table" }))
    } while (after !== null)
  } catch (error) {
    replace(bar.progress, h("span", { class: "problem" }, `${label} stopped after ${rows.length}: ${error instanceof Error ? error.message : String(error)}`))
  }
  bar.after()
}

/** Counts what the search finds, then asks in the page; runs only on Confirm. */
const ask = async (bar: Bar, action: string, label: string, verb: string) => {
  replace(bar.outcomes)
  replace(bar.progress, "counting…")
  // The search counted is the search acted on, whatever the form holds by the time of Confirm.
  const query = bar.query()
  let count: { readonly total: number; readonly totalExact: boolean }
  try {
    count = await api(`/api/console/search/count?${query.toString()}`)
  } catch (error) {
    replace(bar.progress, h("span", { class: "problem" }, String(error)))
    return
  }
  replace(bar.progress)
  const n = `${count.totalExact ? "" : "at most "}${count.total} job order${count.total === 1 ? "" : "s"}`
  replace(
    bar.confirmBox,
    h("span", { class: "question" }, `${verb} ${n} matching this search? Each goes through the same checks as a single action.`, " "),
    button("Confirm", "confirm", () => {
      replace(bar.confirmBox)
      void runAll(bar, query, action, label, count.total)
    }),
    " ",
    button("Cancel", "cancel", () => replace(bar.confirmBox))
  )
}

/**
 * The bulk bar of a search (empty for a viewer: the server refuses a viewer anyway). `query`
 * gives the search as it was last run; `after` runs when a bulk action ends (to show the search again).
 */
export const bulkBar = (query: () => URLSearchParams, after: () => void): HTMLElement => {
  const element = h("section", { id: "bulk" })
  void me().then((who) => {
    if (!who.actions) return
    const comment = h("input", { id: "bulk-comment", placeholder: "comment (recorded with each job; needed for a retry)" }) as HTMLInputElement
    const bar: Bar = { query, comment, confirmBox: h("div", { id: "bulk-confirm" }), progress: h("p", { id: "bulk-progress", role: "status" }), outcomes: h("div", { id: "bulk-outcomes" }), after }
    const buttons = ACTIONS.map(([action, label, verb]) => button(`${verb} all matching`, action === "retry" ? "act" : "act destructive", () => void ask(bar, action, label, verb), { "data-bulk": action }))
    replace(element, h("h2", {}, "Act on every match"), comment, " ", buttons, bar.confirmBox, bar.progress, bar.outcomes)
  })
  return element
}
