import { api, ApiError } from "../api.js"
import { h, jobHref, link, replace, scopeHref, section, table, when } from "../dom.js"
import { drawGraph, type RecipeGraph } from "../graph.js"
import { coalesce, follow } from "../live.js"
import { me } from "../acts.js"
import { type JobControls, jobControls } from "./jobActions.js"

interface ActionRun {
  readonly action: string
  readonly step: string
  readonly visit: number
  readonly state: string
  readonly correlationId?: string
  readonly attempts: number
  readonly deadline?: number
  readonly error?: string
}

interface JobView {
  readonly id: string
  readonly scope: string
  readonly version: number
  readonly state: string | null
  readonly document: unknown
  readonly history: ReadonlyArray<{
    readonly kind: string
    readonly change: string
    readonly version: number
    readonly ts: number
    readonly state: string | null
    /** Who made the change (the MES, an operator on the CLI, the engine, a trigger); null on older entries. */
    readonly origin: { readonly kind: string; readonly id: string; readonly comment?: string; readonly from?: string } | null
  }>
  readonly historyCut: boolean
  /** `document` in the current form; as stored, with `problems`, when it does not decode. */
  readonly response: { readonly id: string; readonly state: string; readonly version: number; readonly document: unknown; readonly problems: ReadonlyArray<string> | null } | null
  readonly execution: {
    readonly status: string
    readonly revision: number
    readonly recipeDigest: string | null
    readonly workMasterId: string
    readonly startedAt: number
    readonly endedAt?: number
    readonly error?: string
    readonly active: ReadonlyArray<{ readonly step: string; readonly visit: number; readonly enteredAt: number; readonly branch?: { readonly name: string } }>
    readonly branches: ReadonlyArray<{ readonly name: string }>
    readonly visits: Readonly<Record<string, number>>
    readonly actions: ReadonlyArray<ActionRun>
    readonly graph: RecipeGraph | null
  } | null
  /** The methods the job order's state allows, and the open actions a retry may send again. */
  readonly allowed: ReadonlyArray<string>
  readonly retryable: ReadonlyArray<string>
  /** Who acted on the job: time, method or intervention, `kind:id`, from where, comment. */
  readonly audit: ReadonlyArray<{ readonly ts: number; readonly what: string; readonly actor: string; readonly from: string | null; readonly comment: string | null }>
}

/** A row of the execution log tree: an execution, one of its nodes, or a child that is gone. */
interface TreeRow {
  readonly type: "execution" | "node" | "missing"
  readonly depth: number
  readonly executionId: string
  readonly record?: {
    readonly kind?: string
    readonly name?: string
    readonly visit?: number
    readonly status?: string
    readonly workMasterId?: string
    readonly openedAt?: number
    readonly closedAt?: number
    readonly detail?: unknown
  }
}

/** `cli:alice@host (from host) — comment`: who made a change, as the history shows it. */
const byText = (origin: JobView["history"][number]["origin"]): string =>
  origin === null ? "" : `${origin.kind}:${origin.id}${origin.from === undefined ? "" : ` (from ${origin.from})`}${origin.comment === undefined ? "" : ` — ${origin.comment}`}`

const json = (value: unknown) => h("pre", { class: "json" }, JSON.stringify(value, null, 2))

/** One row: indented by its depth; a node without `closedAt` is open (where a running execution is). */
const treeRow = (row: TreeRow) => {
  const r = row.record ?? {}
  const open = row.type !== "missing" && r.closedAt === undefined
  const label =
    row.type === "execution"
      ? [h("strong", {}, "execution "), h("span", { class: "mono" }, row.executionId), ` · ${r.status ?? ""} · ${r.workMasterId ?? ""}`]
      : row.type === "node"
        ? [h("span", { class: "kind" }, r.kind ?? "node"), " ", r.name ?? "", r.visit === undefined ? "" : ` (visit ${r.visit})`, r.detail === undefined ? "" : h("span", { class: "meta" }, ` ${JSON.stringify(r.detail).slice(0, 160)}`)]
        : ["missing execution ", h("span", { class: "mono" }, row.executionId)]
  return h(
    "li",
    { class: `tree-row ${row.type}${open ? " open" : ""}`, "data-depth": String(row.depth) },
    h("span", { class: `indent d${Math.min(Math.max(row.depth, 0), 12)}` }),
    h("span", { class: "time" }, when(r.openedAt), " "),
    label,
    open ? h("span", { class: "open-mark" }, " ● open") : null
  )
}

const logTree = async (id: string): Promise<HTMLElement> => {
  try {
    const tree = await api<{ readonly rows?: ReadonlyArray<TreeRow> }>(`/api/executions/${encodeURIComponent(id)}/tree`)
    const rows = tree.rows ?? []
    return rows.length === 0 ? h("p", { class: "empty", id: "log-tree" }, "no log") : h("ul", { class: "tree", id: "log-tree" }, rows.map(treeRow))
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return h("p", { class: "empty", id: "log-tree" }, "no log")
    return h("p", { class: "problem", id: "log-tree" }, String(error))
  }
}

/** The execution's actions; with `retry`, an open action has a button that sends it again. */
const actionsTable = (actions: ReadonlyArray<ActionRun>, retry: ((action: string) => HTMLElement) | undefined) =>
  table(
    ["action", "step", "visit", "state", "correlation id", "attempts", "deadline", "error", ""],
    actions.map((a) =>
      h(
        "tr",
        { "data-action": a.action, class: `action ${a.state}` },
        h("td", {}, a.action),
        h("td", {}, a.step),
        h("td", {}, String(a.visit)),
        h("td", { class: "state" }, a.state),
        h("td", { class: "mono" }, a.correlationId ?? ""),
        h("td", {}, String(a.attempts)),
        h("td", {}, when(a.deadline)),
        h("td", { class: "problem" }, a.error ?? ""),
        h("td", {}, retry === undefined ? null : retry(a.action))
      )
    ),
    { id: "actions" }
  )

const auditSection = (audit: JobView["audit"]) =>
  section(
    "Audit",
    audit.length === 0
      ? h("p", { class: "empty", id: "audit" }, "nobody acted on this job yet")
      : table(
          ["time", "what", "by", "from", "comment"],
          audit.map((a) => h("tr", { class: "audit" }, h("td", {}, when(a.ts)), h("td", {}, a.what), h("td", { class: "by mono" }, a.actor), h("td", { class: "mono" }, a.from ?? ""), h("td", {}, a.comment ?? ""))),
          { id: "audit" }
        )
  )

type Execution = NonNullable<JobView["execution"]>

/** The recipe graph lit by the execution, or why there is none. */
const graphOf = (ex: JobView["execution"]) =>
  ex?.graph === null || ex?.graph === undefined
    ? h("p", { class: "empty" }, ex === null ? "not started: no execution yet" : "no graph for this recipe")
    : drawGraph(ex.graph, { active: ex.active, visits: ex.visits, actions: ex.actions, activeBranches: [...new Set(ex.active.flatMap((a) => (a.branch ? [a.branch.name] : [])))] })

/** The execution's line above the graph: work master, status, revision, active steps, digest, error. */
const executionLine = (ex: Execution) =>
  h(
    "p",
    { class: "meta" },
    "work master ",
    h("span", { class: "mono" }, ex.workMasterId),
    " · execution ",
    h("span", { class: `badge exec-${ex.status}`, id: "execution-status" }, ex.status),
    " · revision ",
    String(ex.revision),
    " · active ",
    h("span", { id: "active-steps" }, ex.active.map((a) => a.step).join(", ") || "none"),
    ex.recipeDigest ? [" · digest ", h("span", { class: "mono digest" }, ex.recipeDigest.slice(0, 12))] : null,
    ex.error ? [" · ", h("span", { class: "problem" }, ex.error)] : null
  )

const historySection = (view: JobView) =>
  section(
    "State history",
    table(
      ["time", "document", "change", "version", "state", "by"],
      view.history.map((r) => h("tr", { class: "history" }, h("td", {}, when(r.ts)), h("td", {}, r.kind), h("td", {}, r.change), h("td", {}, String(r.version)), h("td", { class: "state" }, r.state ?? ""), h("td", { class: "by" }, byText(r.origin)))),
      { id: "history" }
    ),
    view.historyCut ? h("p", { class: "meta" }, "older changes not read (a long change stream)") : null
  )

const responseSection = (response: JobView["response"]) =>
  section(
    "Job response",
    response === null
      ? h("p", { class: "empty" }, "no job response yet")
      : [
          h("p", { class: "meta" }, response.id, " · ", response.state),
          response.problems === null ? null : h("p", { class: "problem" }, `does not decode: ${response.problems.join("; ")}`),
          json(response.document)
        ]
  )

/** The page's parts for one read of the job, the retry buttons an operator's. */
const jobParts = async (view: JobView, controls: JobControls | undefined) => {
  const ex = view.execution
  const retry = controls === undefined ? undefined : (action: string) => (view.retryable.includes(action) ? controls.retryButton(action) : h("span"))
  return [
    h("nav", { class: "crumbs" }, link("/console", "island"), " / ", link(scopeHref(view.scope), view.scope), " / ", h("span", { class: "mono" }, view.id)),
    h("h1", {}, "Job ", h("span", { class: "mono", id: "job-id" }, view.id), " ", h("span", { class: `badge state-${view.state ?? "unknown"}`, id: "job-state" }, view.state ?? "malformed")),
    controls?.element,
    section("Recipe", ex === null ? null : executionLine(ex), graphOf(ex)),
    ex === null || ex.actions.length === 0 ? null : section("Actions", actionsTable(ex.actions, retry)),
    auditSection(view.audit),
    historySection(view),
    responseSection(view.response),
    section("Execution log", await logTree(view.id)),
    section("Job order", json(view.document)),
    h("p", { class: "meta" }, link(jobHref(view.id), "permalink"))
  ]
}

/**
 * The job page: for an operator the methods its state allows, then the recipe graph lit by the
 * execution, its actions (open ones with a retry for an operator), who acted (audit), the state
 * history, the response, the log tree and the order; live.
 */
export const jobPage = (root: HTMLElement, id: string) => {
  document.title = `Job ${id} · island console`
  // Made once, for an operator only, and kept across refreshes (a comment being typed survives them).
  let controls: JobControls | undefined
  const render = async () => {
    const who = await me()
    if (who.actions) controls ??= jobControls(id, who, () => refresh())
    let view: JobView
    try {
      view = await api<JobView>(`/api/console/jobs/${encodeURIComponent(id)}`)
    } catch (error) {
      replace(root, h("h1", {}, "Job ", h("span", { class: "mono" }, id)), h("p", { class: "problem", id: "job-problem" }, String(error)))
      return
    }
    controls?.update(view.allowed)
    replace(root, ...(await jobParts(view, controls)))
  }
  const refresh = coalesce(render)
  follow({ job: id }, (event) => {
    if (event.type === "execution") refresh()
    if (event.type === "change") {
      const changed = (event.data as { id?: string }).id
      if (changed === id || changed === `${id}-response`) refresh()
    }
  }, refresh)
}
