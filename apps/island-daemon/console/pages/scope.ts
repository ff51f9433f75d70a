import { api } from "../api.js"
import { h, jobHref, link, replace, table } from "../dom.js"
import { coalesce, follow } from "../live.js"

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

/**
 * The scope page: its job orders in list order with their states, a state filter, a search by
 * id and cursor paging, all on the server. A change of one of the shown job orders updates its
 * row; a job order arriving shows once the first page is read again (new ones may sort first).
 */
export const scopePage = (root: HTMLElement, scope: string) => {
  document.title = `Scope ${scope} · island console`
  const params = new URLSearchParams(location.search)
  let state = params.get("state") ?? ""
  let id = params.get("id") ?? ""
  const cursors: Array<string> = ["0"]
  let page = 0
  let next: string | null = null

  const stateSelect = h("select", { id: "state-filter", name: "state" }, STATES.map((s) => h("option", { value: s }, s === "" ? "every state" : s))) as HTMLSelectElement
  stateSelect.value = state
  const search = h("input", { id: "job-search", type: "search", placeholder: "job order id", name: "id" }) as HTMLInputElement
  search.value = id
  const list = h("div", { id: "job-orders" })
  const pager = h("div", { class: "pager" })

  const render = async () => {
    const q = new URLSearchParams({ cursor: cursors[page]!, limit: "50" })
    if (state) q.set("state", state)
    if (id) q.set("id", id)
    let result: { readonly items: ReadonlyArray<Row>; readonly next: string | null; readonly scanned: number }
    try {
      result = await api(`/api/console/scopes/${encodeURIComponent(scope)}/joborders?${q.toString()}`)
    } catch (error) {
      replace(list, h("p", { class: "problem" }, String(error)))
      return
    }
    next = result.next
    replace(
      list,
      result.items.length === 0
        ? h("p", { class: "empty" }, "no job orders here")
        : table(
            ["job order", "state", "priority", "version"],
            result.items.map((r) =>
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
    )
    const prev = h("button", { type: "button", id: "page-prev" }, "previous") as HTMLButtonElement
    prev.disabled = page === 0
    prev.onclick = () => {
      page--
      refresh()
    }
    const more = h("button", { type: "button", id: "page-next" }, "next") as HTMLButtonElement
    more.disabled = next === null
    more.onclick = () => {
      if (next === null) return
      cursors[page + 1] = next
      page++
      refresh()
    }
    replace(pager, prev, h("span", { class: "meta" }, ` page ${page + 1} `), more)
  }
  const refresh = coalesce(render)
  const apply = () => {
    state = stateSelect.value
    id = search.value.trim()
    cursors.length = 1
    page = 0
    const q = new URLSearchParams()
    if (state) q.set("state", state)
    if (id) q.set("id", id)
    history.replaceState(null, "", `${location.pathname}${q.size > 0 ? `?${q.toString()}` : ""}`)
    refresh()
  }
  stateSelect.onchange = apply
  search.onchange = apply
  const form = h("form", { class: "filters", id: "filters" }, h("label", {}, "state ", stateSelect), " ", h("label", {}, "id ", search))
  form.onsubmit = (e) => {
    e.preventDefault()
    apply()
  }
  replace(root, h("nav", { class: "crumbs" }, link("/console", "island"), " / ", scope), h("h1", {}, "Scope ", h("span", { class: "mono" }, scope)), form, list, pager)
  follow({ scope }, (event) => {
    if (event.type === "change" && (event.data as { kind?: string }).kind === "joborder") refresh()
  }, refresh)
}
