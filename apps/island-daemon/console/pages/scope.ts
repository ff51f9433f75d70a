import { api } from "../api.js"
import { h, jobHref, link, replace, table } from "../dom.js"
import { historyPanel } from "../history.js"
import { coalesce, follow } from "../live.js"
import { searchPanel } from "../search.js"

interface Row {
  readonly id: string
  readonly priority: number
  readonly version: number | null
  readonly state: string | null
}

const STATES = [
  "",
  "NotAllowedToStart_Waiting",
  "NotAllowedToStart_Ready",
  "NotAllowedToStart_Loaded",
  "AllowedToStart_Waiting",
  "AllowedToStart_Ready",
  "AllowedToStart_Loaded",
  "Running",
  "Interrupted_Held",
  "Interrupted_Suspended",
  "Ended_Completed",
  "Ended_Closed",
  "Aborted"
]

/** The scope page's listing: the filter and the page shown, the cursors of the pages seen, where it renders. */
interface Listing {
  readonly scope: string
  state: string
  id: string
  readonly cursors: Array<string>
  page: number
  next: string | null
  readonly list: HTMLElement
  readonly pager: HTMLElement
  refresh: () => void
}

const jobOrderTable = (items: ReadonlyArray<Row>) =>
  items.length === 0
    ? h("p", { class: "empty" }, "no job orders here")
    : table(
        ["job order", "state", "priority", "version"],
        items.map((r) =>
          h(
            "tr",
            { "data-job": r.id },
            h("td", { class: "mono" }, link(jobHref(r.id), r.id)),
            h("td", { class: "state" }, h("span", { class: `badge state-${r.state ?? "unknown"}` }, r.state ?? "malformed")),
            h("td", {}, String(r.priority)),
            h("td", {}, String(r.version ?? ""))
          )
        ),
        { id: "job-order-table" }
      )

/** The previous and next buttons with the page number; next keeps the cursor of the page it opens. */
const showPager = (l: Listing) => {
  const prev = h("button", { type: "button", id: "page-prev" }, "previous") as HTMLButtonElement
  prev.disabled = l.page === 0
  prev.onclick = () => {
    l.page--
    l.refresh()
  }
  const more = h("button", { type: "button", id: "page-next" }, "next") as HTMLButtonElement
  more.disabled = l.next === null
  more.onclick = () => {
    if (l.next === null) return
    l.cursors[l.page + 1] = l.next
    l.page++
    l.refresh()
  }
  replace(l.pager, prev, h("span", { class: "meta" }, ` page ${l.page + 1} `), more)
}

const renderListing = async (l: Listing) => {
  const q = new URLSearchParams({ cursor: l.cursors[l.page]!, limit: "50" })
  if (l.state) q.set("state", l.state)
  if (l.id) q.set("id", l.id)
  let result: { readonly items: ReadonlyArray<Row>; readonly next: string | null; readonly scanned: number }
  try {
    result = await api(`/api/console/scopes/${encodeURIComponent(l.scope)}/joborders?${q.toString()}`)
  } catch (error) {
    replace(l.list, h("p", { class: "problem" }, String(error)))
    return
  }
  l.next = result.next
  replace(l.list, jobOrderTable(result.items))
  showPager(l)
}

/** The state filter and the id search; a change starts the listing over at its first page and goes into the address. */
const filterForm = (l: Listing) => {
  const stateSelect = h("select", { id: "state-filter", name: "state" }, STATES.map((s) => h("option", { value: s }, s === "" ? "every state" : s))) as HTMLSelectElement
  stateSelect.value = l.state
  const search = h("input", { id: "job-search", type: "search", placeholder: "job order id", name: "id" }) as HTMLInputElement
  search.value = l.id
  const apply = () => {
    l.state = stateSelect.value
    l.id = search.value.trim()
    l.cursors.length = 1
    l.page = 0
    const q = new URLSearchParams()
    if (l.state) q.set("state", l.state)
    if (l.id) q.set("id", l.id)
    history.replaceState(null, "", `${location.pathname}${q.size > 0 ? `?${q.toString()}` : ""}`)
    l.refresh()
  }
  stateSelect.onchange = apply
  search.onchange = apply
  const form = h("form", { class: "filters", id: "filters" }, h("label", {}, "state ", stateSelect), " ", h("label", {}, "id ", search))
  form.onsubmit = (e) => {
    e.preventDefault()
    apply()
  }
  return form
}

/**
 * The scope page: its job orders in list order with their states, a state filter, a search by
 * id and cursor paging, all on the server. A change of one of the shown job orders updates its
 * row; a job order arriving shows once the first page is read again (new ones may sort first).
 */
export const scopePage = (root: HTMLElement, scope: string) => {
  document.title = `Scope ${scope} · island console`
  const params = new URLSearchParams(location.search)
  const l: Listing = {
    scope,
    state: params.get("state") ?? "",
    id: params.get("id") ?? "",
    cursors: ["0"],
    page: 0,
    next: null,
    list: h("div", { id: "job-orders" }),
    pager: h("div", { class: "pager" }),
    refresh: () => {}
  }
  l.refresh = coalesce(() => renderListing(l))
  const form = filterForm(l)
  const history = historyPanel(scope)
  replace(root, h("nav", { class: "crumbs" }, link("/console", "island"), " / ", scope), h("h1", {}, "Scope ", h("span", { class: "mono" }, scope)), form, l.list, l.pager,
    h("details", { id: "scope-search" }, h("summary", {}, "search this scope"), searchPanel(scope)), history.element)
  follow({ scope }, (event) => {
    if (event.type === "change" && (event.data as { kind?: string }).kind === "joborder") {
      l.refresh()
      history.refresh()
    }
  }, () => {
    l.refresh()
    history.refresh()
  })
}
