import { api } from "../api.js"
import { h, link, replace, scopeHref, section, table } from "../dom.js"
import { historyPanel } from "../history.js"
import { coalesce, follow } from "../live.js"
import { incidentBadge } from "./incidents.js"

interface IslandView {
  readonly readiness: { readonly ready: boolean; readonly checks: Readonly<Record<string, boolean>>; readonly roles: Readonly<Record<string, { ok: boolean; reason?: string; detail?: string }>>; readonly problems: ReadonlyArray<string> }
  readonly scopes: ReadonlyArray<{
    readonly scope: string
    readonly jobOrders: number
    readonly activeExecutions: number
    readonly responsesByState: Readonly<Record<string, number>>
    readonly streamLength: Readonly<Record<string, number>>
    readonly deadLetters: Readonly<Record<string, number>>
    readonly groups: ReadonlyArray<{ readonly stream: string; readonly group: string; readonly lag?: number; readonly pending: number }>
  }>
  readonly activity: ReadonlyArray<{
    readonly scope: string
    readonly activity: { readonly minutes: ReadonlyArray<{ readonly started: number; readonly completed: number }>; readonly runMs: { readonly count: number; readonly p50: number | null; readonly p95: number | null }; readonly cut: boolean }
    readonly engines: ReadonlyArray<{ readonly group: string; readonly consumer: string; readonly pending: number; readonly idleMs: number }>
  }>
  readonly leases: ReadonlyArray<{ readonly lease: string; readonly configId: string | null; readonly holder: string | null; readonly remainingMs: number | null }>
  readonly messages: { readonly counts: Readonly<Record<string, Readonly<Record<string, number>>>>; readonly meanMs: Readonly<Record<string, number | null>> }
  readonly executionLog: {
    readonly dropped: number
    readonly writer: {
      readonly queued: number
      readonly queueSize: number
      readonly written: number
      readonly batches: number
      readonly lastBatchMs: number
      readonly slowestBatchMs: number
      readonly removed: number
      readonly retentionFailures: number
    } | null
  }
}

const sum = (values: Readonly<Record<string, number>>) => Object.values(values).reduce((a, b) => a + b, 0)

/** This daemon's execution log writer: drops stand out (the log is best effort, a drop loses log nodes). */
const executionLogTable = (log: IslandView["executionLog"]) => {
  const w = log.writer
  const rows: ReadonlyArray<readonly [string, string, string?]> = [
    ["writes dropped", String(log.dropped), log.dropped > 0 ? "bad" : "ok"],
    ...(w === null
      ? [["writer", "not running in this daemon"] as const]
      : [
          ["queued / queue size", `${w.queued} / ${w.queueSize}`, w.queued >= w.queueSize ? "bad" : ""] as const,
          ["written", `${w.written} in ${w.batches} batches`] as const,
          ["last / slowest batch", `${w.lastBatchMs} / ${w.slowestBatchMs} ms (dropped past 5000 ms)`] as const,
          ["removed by retention", `${w.removed}${w.retentionFailures > 0 ? ` (${w.retentionFailures} runs failed)` : ""}`, w.retentionFailures > 0 ? "bad" : ""] as const
        ])
  ]
  return table(["figure", "value"], rows.map(([name, value, style]) => h("tr", {}, h("td", {}, name), h("td", { class: style ?? "" }, value))), { id: "execution-log" })
}

const readinessSection = (r: IslandView["readiness"]) =>
  section(
    "Readiness",
    table(["check", "passes"], Object.entries(r.checks).map(([name, passes]) => h("tr", {}, h("td", {}, name), h("td", { class: passes ? "ok" : "bad" }, passes ? "yes" : "no")))),
    table(["role", "health"], Object.entries(r.roles).map(([role, health]) => h("tr", {}, h("td", {}, role), h("td", { class: health.ok ? "ok" : "bad" }, health.ok ? (health.detail === undefined ? "ok" : `ok: ${health.detail}`) : (health.reason ?? "failing"))))),
    r.problems.length === 0 ? null : h("ul", { class: "problem" }, r.problems.map((p) => h("li", {}, p)))
  )

const scopesSection = (scopes: IslandView["scopes"]) =>
  section(
    "Scopes",
    table(
      ["scope", "job orders", "running executions", "job responses by state", "changes", "sfc work", "pending", "dead letters"],
      scopes.map((s) =>
        h(
          "tr",
          { "data-scope": s.scope },
          h("td", {}, link(scopeHref(s.scope), s.scope)),
          h("td", {}, String(s.jobOrders)),
          h("td", {}, String(s.activeExecutions)),
          h("td", {}, Object.entries(s.responsesByState).map(([state, n]) => `${state} ${n}`).join(", ")),
          h("td", {}, String(s.streamLength["changes"] ?? 0)),
          h("td", {}, String(s.streamLength["sfc"] ?? 0)),
          h("td", {}, String(s.groups.reduce((a, g) => a + g.pending, 0))),
          h("td", { class: sum(s.deadLetters) > 0 ? "bad" : "" }, String(sum(s.deadLetters)))
        )
      ),
      { id: "scopes" }
    )
  )

const activitySection = (activity: IslandView["activity"]) =>
  section(
    "Last 5 minutes",
    table(
      ["scope", ...[5, 4, 3, 2, 1].map((m) => `−${m} min started / completed`), "run time p50 / p95", "engine instances seen"],
      activity.map((a) =>
        h(
          "tr",
          { "data-activity": a.scope },
          h("td", {}, a.scope),
          a.activity.minutes.map((m) => h("td", {}, `${m.started} / ${m.completed}`)),
          h("td", {}, a.activity.runMs.p50 === null ? "" : `${a.activity.runMs.p50} / ${a.activity.runMs.p95} ms (${a.activity.runMs.count} jobs)`),
          h("td", { class: "mono" }, a.engines.map((e) => `${e.consumer} (${e.group}, ${e.pending} pending, idle ${Math.round(e.idleMs / 1000)} s)`).join(", "))
        )
      ),
      { id: "activity" }
    )
  )

const leasesSection = (leases: IslandView["leases"]) =>
  section(
    "Leases",
    table(["lease", "configuration", "holder", "time left"], leases.map((l) => h("tr", {}, h("td", {}, l.lease), h("td", {}, l.configId ?? ""), h("td", { class: "mono" }, l.holder ?? "free"), h("td", {}, l.remainingMs === null ? "" : `${Math.round(l.remainingMs / 1000)} s`))))
  )

const messagesSection = (messages: IslandView["messages"]) =>
  section(
    "Messages handled by this daemon",
    table(
      ["kind", "outcomes", "mean handling time"],
      Object.entries(messages.counts).map(([kind, outcomes]) =>
        h("tr", {}, h("td", {}, kind), h("td", {}, Object.entries(outcomes).map(([o, n]) => `${o} ${n}`).join(", ")), h("td", {}, messages.meanMs[kind] == null ? "" : `${messages.meanMs[kind]!.toFixed(1)} ms`))
      )
    )
  )

/** The island page: readiness, scopes with their figures, leases, this daemon's message figures; live. */
export const islandPage = (root: HTMLElement) => {
  document.title = "Island console"
  // Made once: the window and scope picked stay while the rest of the page is drawn again.
  const history = historyPanel()
  const render = async () => {
    let view: IslandView
    try {
      view = await api<IslandView>("/api/console/island")
    } catch (error) {
      replace(root, h("h1", {}, "Island"), h("p", { class: "problem" }, String(error)))
      return
    }
    const r = view.readiness
    history.setScopes(view.scopes.map((s) => s.scope))
    replace(
      root,
      h("h1", {}, "Island ", h("span", { class: r.ready ? "badge ok" : "badge bad", id: "readiness" }, r.ready ? "ready" : "not ready"), " ", incidentBadge()),
      readinessSection(r),
      scopesSection(view.scopes),
      activitySection(view.activity),
      history.element,
      leasesSection(view.leases),
      section("Execution log of this daemon", executionLogTable(view.executionLog)),
      messagesSection(view.messages)
    )
  }
  const refresh = coalesce(render, 1_000)
  const both = () => {
    refresh()
    history.refresh()
  }
  follow({ figures: "1" }, (event) => {
    if (event.type === "figures" || event.type === "change") both()
  }, both)
}
