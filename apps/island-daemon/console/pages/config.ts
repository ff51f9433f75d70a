import { api } from "../api.js"
import { h, replace, table } from "../dom.js"
import { drawGraph, type RecipeGraph } from "../graph.js"
import { coalesce, follow } from "../live.js"

interface ConfigView {
  readonly scopes: ReadonlyArray<{
    readonly scope: string
    readonly acceptanceLimit: number | null
    readonly workMasters: ReadonlyArray<{ readonly id: string; readonly version: number; readonly description: string | null; readonly digest: string | null; readonly graph: RecipeGraph | null; readonly problems: ReadonlyArray<string> }>
    readonly referenceLists: ReadonlyArray<{ readonly kind: string; readonly count: number; readonly members: ReadonlyArray<string> }>
  }>
}

const cell = (value: unknown) => (typeof value === "string" ? value : value === null || value === undefined ? "" : JSON.stringify(value))

/** A list answer (`{items: [...]}`) as a table, one column per field. */
const itemsTable = (items: ReadonlyArray<Readonly<Record<string, unknown>>>) => {
  const columns = [...new Set(items.flatMap((item) => Object.keys(item)))]
  return table(columns, items.map((item) => h("tr", {}, columns.map((c) => h("td", { class: typeof item[c] === "object" ? "mono" : undefined }, cell(item[c]))))))
}

/** A stored row the island cannot read (a trigger, a journal's configuration), with why. */
interface Unreadable {
  readonly id?: string
  readonly scope?: string
  readonly journal?: string
  readonly problems: ReadonlyArray<string>
}

/** What is stored but not in use, said out loud: the island leaves these out until they are fixed. */
const unreadableList = (rows: ReadonlyArray<Unreadable>) =>
  rows.length === 0
    ? null
    : h(
        "ul",
        { class: "problem unreadable" },
        rows.map((u) => h("li", {}, h("span", { class: "mono" }, u.id ?? `${u.scope ?? ""}/${u.journal ?? ""}`), ": stored but not readable, left out: ", u.problems.join("; ")))
      )

/** Journals, the recipe catalogue and triggers have their own API routes when the daemon has them: shown when they answer. */
const optional = async (title: string, path: string) => {
  try {
    const body = await api<{ readonly items?: ReadonlyArray<Readonly<Record<string, unknown>>>; readonly unreadable?: ReadonlyArray<Unreadable> }>(path)
    const items = body.items ?? []
    return h(
      "section",
      { "data-optional": path },
      h("h2", {}, title),
      unreadableList(body.unreadable ?? []),
      items.length === 0 ? h("p", { class: "empty" }, "none") : itemsTable(items)
    )
  } catch {
    return null
  }
}

/** The configuration page: per scope the work masters with their recipe graphs and digests, reference lists, acceptance limit. */
export const configPage = (root: HTMLElement) => {
  document.title = "Configuration · island console"
  const render = async () => {
    let view: ConfigView
    try {
      view = await api<ConfigView>("/api/console/config")
    } catch (error) {
      replace(root, h("h1", {}, "Configuration"), h("p", { class: "problem" }, String(error)))
      return
    }
    const extras = await Promise.all([optional("Recipe catalogue", "/api/recipes"), optional("Triggers", "/api/triggers"), optional("Journals and counters", "/api/journals")])
    replace(
      root,
      h("h1", {}, "Configuration"),
      view.scopes.map((s) =>
        h(
          "section",
          { class: "scope-config", "data-scope": s.scope },
          h("h2", {}, "Scope ", h("span", { class: "mono" }, s.scope)),
          h("p", { class: "meta" }, "acceptance limit: ", s.acceptanceLimit === null ? "the island's default" : String(s.acceptanceLimit)),
          s.workMasters.map((w) =>
            h(
              "div",
              { class: "work-master", "data-work-master": w.id },
              h("h3", {}, "Work master ", h("span", { class: "mono" }, w.id), ` v${w.version}`),
              w.description === null ? null : h("p", {}, w.description),
              w.digest === null ? h("p", { class: "meta" }, "no recipe") : h("p", { class: "meta" }, "recipe digest ", h("span", { class: "mono digest" }, w.digest)),
              w.problems.length === 0 ? null : h("ul", { class: "problem" }, w.problems.map((p) => h("li", {}, p))),
              w.graph === null ? null : drawGraph(w.graph)
            )
          ),
          table(["reference list", "entries", "members"], s.referenceLists.map((l) => h("tr", {}, h("td", {}, l.kind), h("td", {}, String(l.count)), h("td", { class: "mono" }, l.members.join(", ")))))
        )
      ),
      extras
    )
  }
  const refresh = coalesce(render, 1_000)
  follow({}, (event) => {
    if (event.type === "change" && (event.data as { kind?: string }).kind === "workmaster") refresh()
  }, refresh)
}
