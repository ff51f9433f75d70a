import { api } from "./api.js"
import { bulkBar } from "./bulk.js"
import { h, jobHref, link, replace, scopeHref, table, when } from "./dom.js"

/**
 * Job order search (`/api/console/search`): a form with every filter, the total, the matches and
 * cursor paging, all answered by the server from its search index. On the island-wide page
 * (`/console/search`) it searches every scope or the ones named; on a scope page that scope only.
 * The filters go into the address, so a search can be bookmarked and shared.
 */

interface Item {
  readonly scope: string
  readonly id: string
  readonly state: string
  readonly workMaster: string | null
  readonly priority: number
  readonly createdMs: number | null
  readonly endedMs: number | null
  readonly error?: string
}

interface Page {
  readonly items: ReadonlyArray<Item>
  readonly total: number
  readonly totalExact: boolean
  readonly next: string | null
}

const STATES = [
  "", "InitialState", "NotAllowedToStart_Waiting", "NotAllowedToStart_Ready", "NotAllowedToStart_Loaded", "AllowedToStart_Waiting",
  "AllowedToStart_Ready", "AllowedToStart_Loaded", "Running", "Interrupted_Held", "Interrupted_Suspended", "Ended_Completed", "Ended_Closed", "Aborted"
]

/** The text filters: query parameter, label, input type. Times are the browser's local time. */
const FIELDS: ReadonlyArray<readonly [string, string, string]> = [
  ["idPrefix", "id starts with", "search"],
  ["workMaster", "work master", "text"],
  ["createdFrom", "created from", "datetime-local"],
  ["createdTo", "created to", "datetime-local"],
  ["endedFrom", "ended from", "datetime-local"],
  ["endedTo", "ended to", "datetime-local"],
  ["priorityMin", "priority from", "number"],
  ["priorityMax", "priority to", "number"],
  ["error", "error text", "search"]
]

const isTime = (name: string) => name.startsWith("created") || name.startsWith("ended")

/** The query of the form's values: a local date-time goes as epoch ms. */
const queryOf = (inputs: ReadonlyMap<string, HTMLInputElement | HTMLSelectElement>, scope: string | undefined): URLSearchParams => {
  const q = new URLSearchParams()
  if (scope !== undefined) q.set("scope", scope)
  for (const [name, input] of inputs) {
    const value = input.value.trim()
    if (value === "") continue
    q.set(name, isTime(name) && !Number.isNaN(new Date(value).getTime()) ? String(new Date(value).getTime()) : value)
  }
  return q
}

const resultTable = (items: ReadonlyArray<Item>) =>
  items.length === 0
    ? h("p", { class: "empty" }, "no job orders match")
    : table(
        ["scope", "job order", "state", "priority", "work master", "created", "ended", "error"],
        items.map((r) =>
          h(
            "tr",
            { "data-job": r.id },
            h("td", {}, link(scopeHref(r.scope), r.scope)),
            h("td", { class: "mono" }, link(jobHref(r.id), r.id)),
            h("td", { class: "state" }, h("span", { class: `badge state-${r.state}` }, r.state)),
            h("td", {}, String(r.priority)),
            h("td", { class: "mono" }, r.workMaster ?? ""),
            h("td", { title: r.createdMs === null ? "" : new Date(r.createdMs).toISOString() }, when(r.createdMs)),
            h("td", { title: r.endedMs === null ? "" : new Date(r.endedMs).toISOString() }, when(r.endedMs)),
            h("td", { class: "problem" }, r.error ?? "")
          )
        ),
        { id: "search-table" }
      )

/** Where the results render and the cursors of the pages seen (page i starts at cursors[i]). */
interface Results {
  readonly total: HTMLElement
  readonly list: HTMLElement
  readonly pager: HTMLElement
  readonly cursors: Array<string | undefined>
  page: number
}

const pagerOf = (r: Results, next: string | null, show: () => void) => {
  const prev = h("button", { type: "button", id: "search-prev" }, "previous") as HTMLButtonElement
  prev.disabled = r.page === 0
  prev.onclick = () => {
    r.page--
    show()
  }
  const more = h("button", { type: "button", id: "search-next" }, "next") as HTMLButtonElement
  more.disabled = next === null
  more.onclick = () => {
    r.cursors[r.page + 1] = next ?? undefined
    r.page++
    show()
  }
  replace(r.pager, prev, h("span", { class: "meta" }, ` page ${r.page + 1} `), more)
}

const showResults = async (r: Results, query: URLSearchParams) => {
  const q = new URLSearchParams(query)
  q.set("limit", "50")
  const after = r.cursors[r.page]
  if (after !== undefined) q.set("after", after)
  let page: Page
  try {
    page = await api<Page>(`/api/console/search?${q.toString()}`)
  } catch (error) {
    replace(r.total, "")
    replace(r.list, h("p", { class: "problem", id: "search-problem" }, String(error)))
    replace(r.pager)
    return
  }
  replace(r.total, `${page.totalExact ? "" : "at most "}${page.total} job order${page.total === 1 ? "" : "s"}`)
  replace(r.list, resultTable(page.items))
  pagerOf(r, page.next, () => void showResults(r, query))
}

const inputOf = (name: string, type: string, value: string) => {
  const input = h("input", { name, type, id: `search-${name}`, ...(type === "datetime-local" ? { step: "1" } : {}) }) as HTMLInputElement
  input.value = value
  return input
}

/** The search form and its results; `scope` fixes the scope (a scope page), else the form asks for scopes. */
export const searchPanel = (scope?: string): HTMLElement => {
  const params = new URLSearchParams(scope === undefined ? location.search : "")
  const inputs = new Map<string, HTMLInputElement | HTMLSelectElement>()
  if (scope === undefined) inputs.set("scope", inputOf("scope", "text", params.get("scope") ?? ""))
  const state = h("select", { name: "state", id: "search-state" }, STATES.map((s) => h("option", { value: s }, s === "" ? "any state" : s))) as HTMLSelectElement
  state.value = params.get("state") ?? ""
  inputs.set("state", state)
  for (const [name, , type] of FIELDS) inputs.set(name, inputOf(name, type, isTime(name) ? "" : (params.get(name) ?? "")))
  const labels: Record<string, string> = { scope: "scopes (comma-separated)", state: "state", ...Object.fromEntries(FIELDS.map(([n, l]) => [n, l])) }
  const results: Results = { total: h("p", { class: "meta", id: "search-total" }), list: h("div", { id: "search-results" }), pager: h("div", { class: "pager" }), cursors: [undefined], page: 0 }
  const submit = h("button", { type: "submit", id: "search-submit" }, "search")
  const form = h("form", { class: "filters search", id: "search-form" }, [...inputs].map(([name, input]) => h("label", {}, `${labels[name]} `, input)), submit)
  // The search as last run: what the results show and what a bulk action acts on.
  let current = queryOf(inputs, scope)
  const showFirst = () => {
    results.cursors.length = 1
    results.page = 0
    void showResults(results, current)
  }
  form.onsubmit = (e) => {
    e.preventDefault()
    current = queryOf(inputs, scope)
    // The island-wide page keeps its search in the address; a scope page's address is its own filter's.
    if (scope === undefined) history.replaceState(null, "", `${location.pathname}${current.size > 0 ? `?${current.toString()}` : ""}`)
    showFirst()
  }
  if (scope === undefined) void showResults(results, current)
  return h("section", { id: "search" }, form, results.total, results.list, results.pager, bulkBar(() => current, showFirst))
}

/** `/console/search`: the island-wide search. */
export const searchPage = (root: HTMLElement) => {
  document.title = "Search · island console"
  replace(root, h("nav", { class: "crumbs" }, link("/console", "island"), " / search"), h("h1", {}, "Search job orders"), searchPanel())
}
