import { me } from "../acts.js"
import { api } from "../api.js"
import { h, link, replace, table, when } from "../dom.js"
import { type IncidentControls, incidentControls } from "../incidentActions.js"
import { coalesce, follow } from "../live.js"

interface Incident {
  readonly kind: string
  readonly scope: string
  readonly id: string
  readonly at: number
  readonly title: string
  readonly reason: string
  readonly action: { readonly kind: string; readonly target: Readonly<Record<string, string | number>>; readonly label: string }
  readonly link: string
}

interface IncidentPage {
  readonly items: ReadonlyArray<Incident>
  readonly next: string | null
}

const KINDS = ["aborted-job", "failed-action", "dead-letter", "held-request", "lost-lease"] as const

/** One incident: when, what, where, why, and what can be done (an operator's button beside the link: incidentActions.ts). */
const row = (item: Incident, controls: IncidentControls) =>
  h(
    "tr",
    { class: "incident", "data-kind": item.kind, "data-id": item.id },
    h("td", { title: new Date(item.at).toISOString() }, when(item.at)),
    h("td", {}, item.kind),
    h("td", {}, item.scope),
    h("td", {}, link(item.link, item.title)),
    h("td", { class: "problem reason" }, item.reason),
    h("td", { class: "action", "data-action": item.action.kind, "data-target": JSON.stringify(item.action.target) }, link(item.link, item.action.label), " ", controls.control(item.action))
  )

/** The filters; the page's policy allows no form submission, so the script follows them itself. */
const filterForm = (kind: string, scope: string) => {
  const form = h(
    "form",
    { class: "filters" },
    h("label", {}, "kind ", h("select", { name: "kind" }, h("option", { value: "" }, "every kind"), KINDS.map((k) => h("option", k === kind ? { value: k, selected: "" } : { value: k }, k)))),
    " ",
    h("label", {}, "scope ", h("input", { name: "scope", value: scope, placeholder: "every scope" })),
    " ",
    h("button", { type: "submit" }, "show")
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const chosen = new URLSearchParams()
    for (const [name, value] of new FormData(form as HTMLFormElement)) if (typeof value === "string" && value !== "") chosen.set(name, value)
    location.assign(`/console/incidents${chosen.size > 0 ? `?${chosen}` : ""}`)
  })
  return form
}

/** The API's query for the page after `after` (the first without), with the page's filters. */
const pageQuery = (kind: string, scope: string, after: string | null) => {
  const q = new URLSearchParams({ limit: "50" })
  if (kind !== "") q.set("kind", kind)
  if (scope !== "") q.set("scope", scope)
  if (after !== null) q.set("after", after)
  return q
}

const shownText = (count: number, next: string | null) => (count === 0 ? "nothing needs attention" : `${count} shown${next === null ? "" : ", more below"}`)

/** The list's rows, its status line and its "older" button, and `load` that fills them a page at a time. */
const incidentList = (kind: string, scope: string, controls: IncidentControls) => {
  const body = h("tbody", {})
  const more = h("button", { type: "button", class: "more", hidden: "" }, "older incidents")
  const status = h("p", { class: "meta" }, "loading…")
  let next: string | null = null
  /** A page after `after` (the first without), appended, or in place of the list for the first. */
  const load = async (after: string | null) => {
    try {
      const page = await api<IncidentPage>(`/api/console/incidents?${pageQuery(kind, scope, after)}`)
      if (after === null) body.replaceChildren()
      for (const item of page.items) body.appendChild(row(item, controls))
      next = page.next
      more.hidden = next === null
      status.className = "meta"
      status.textContent = shownText(body.childElementCount, next)
    } catch (error) {
      status.textContent = String(error)
      status.className = "problem"
    }
  }
  return { body, more, status, load, next: () => next }
}

/**
 * The incident page: the island's incidents newest first, a page at a time, filtered by kind and
 * scope. The first page follows the live feed; once older pages are shown, the list stays put.
 */
export const incidentsPage = async (root: HTMLElement) => {
  document.title = "Incidents · island console"
  const params = new URLSearchParams(location.search)
  const kind = params.get("kind") ?? ""
  const scope = params.get("scope") ?? ""
  let older = false
  // After an action the first page is read again: a resolved incident leaves the list at once.
  const controls = incidentControls(await me(), () => {
    older = false
    void load(null)
  })
  const { body, more, status, load, next } = incidentList(kind, scope, controls)
  more.addEventListener("click", () => {
    older = true
    void load(next())
  })
  const list = table(["when", "kind", "scope", "what", "why", "action"], [], { class: "incidents" })
  list.querySelector("tbody")!.replaceWith(body)
  replace(root, h("h1", {}, "Incidents"), filterForm(kind, scope), controls.element, status, list, more)
  const refresh = coalesce(() => (older ? Promise.resolve() : load(null)), 500)
  follow({ figures: "1" }, (event) => {
    if (event.type === "figures") refresh()
  }, refresh)
}

/** The island page's link to this page with how many incidents there are (200 and more show as "200+"). */
export const incidentBadge = () => {
  const badge = h("a", { href: "/console/incidents", class: "badge", id: "incidents" }, "incidents")
  api<IncidentPage>("/api/console/incidents?limit=200").then(
    (page) => {
      badge.textContent = `${page.items.length}${page.next === null ? "" : "+"} incidents`
      badge.className = page.items.length === 0 ? "badge ok" : "badge bad"
    },
    () => undefined
  )
  return badge
}
