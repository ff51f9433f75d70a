import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { inject } from "vitest"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"

/**
 * The Grafana dashboard shipped in `deploy/grafana`: its panels and variables query the data source
 * the `datasource` variable picks, and every metric its queries name is one a running daemon
 * exports (a renamed metric would leave a panel empty for good), a histogram's series by their
 * `_bucket`, `_sum` and `_count` names.
 */

interface Target {
  readonly expr?: string
  readonly datasource?: { readonly uid?: string }
}
interface Panel {
  readonly id: number
  readonly type: string
  readonly title: string
  readonly datasource?: { readonly uid?: string }
  readonly targets?: ReadonlyArray<Target>
  readonly panels?: ReadonlyArray<Panel>
}
interface Variable {
  readonly name: string
  readonly type: string
  readonly query: unknown
  readonly datasource?: { readonly uid?: string }
}
interface Dashboard {
  readonly uid: string
  readonly panels: ReadonlyArray<Panel>
  readonly templating: { readonly list: ReadonlyArray<Variable> }
}

const dashboard = JSON.parse(readFileSync(new URL("../../../deploy/grafana/microdcs-island.json", import.meta.url), "utf8")) as Dashboard
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])])
const graphs = panels.filter((p) => p.type !== "row")
const variables = dashboard.templating.list
const queries = [
  ...graphs.flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? "")),
  ...variables.filter((v) => v.type === "query").map((v) => (v.query as { query: string }).query)
]
/** Grafana's reference to the variable that picks the data source (a Grafana placeholder, not a template literal). */
const PICKED = "$" + "{datasource}"

/** Whether the brackets of a query pair up: a cheap guard against a query cut short in an edit. */
const balanced = (query: string): boolean => {
  const open: Array<string> = []
  const pairs: Record<string, string> = { ")": "(", "]": "[", "}": "{" }
  for (const c of query.replace(/"(?:[^"\\]|\\.)*"/g, '""')) {
    if ("([{".includes(c)) open.push(c)
    else if (c in pairs && open.pop() !== pairs[c]) return false
  }
  return open.length === 0
}

const named = new Set(queries.flatMap((q) => [...q.matchAll(/\bmicrodcs_[a-z0-9_]+/g)].map((m) => m[0])))

let broker: MosquittoServer
let island: DaemonProcess
beforeAll(async () => {
  broker = await startMosquitto()
  island = await spawnDaemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix: randomPrefix("grafana"), instanceId: "grafana-1" }), 120_000)
  await island.waitReady(120_000)
}, 300_000)
afterAll(async () => {
  await island?.stop()
  await broker?.stop()
})

describe("the Grafana dashboard (deploy/grafana)", () => {
  it("queries the data source its datasource variable picks, in every panel and variable, each query well bracketed", () => {
    expect(variables.find((v) => v.name === "datasource")).toMatchObject({ type: "datasource", query: "prometheus" })
    expect(graphs.length).toBeGreaterThan(20)
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length)
    for (const panel of graphs) {
      expect(panel.title, String(panel.id)).not.toBe("")
      expect(panel.datasource?.uid, panel.title).toBe(PICKED)
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0)
      for (const target of panel.targets ?? []) expect(target.datasource?.uid, panel.title).toBe(PICKED)
    }
    for (const variable of variables.filter((v) => v.type === "query")) expect(variable.datasource?.uid, variable.name).toBe(PICKED)
    expect(queries.filter((q) => q === "" || !balanced(q))).toEqual([])
  })

  it("shows readiness, jobs, messages, the engine and its loop, stream lag, dead letters, the publisher lease, the journal and the log writes", () => {
    const wanted = [
      "microdcs_ready",
      "microdcs_job_orders",
      "microdcs_job_responses",
      "microdcs_executions_active",
      "microdcs_jobs_total",
      "microdcs_job_run_seconds_bucket",
      "microdcs_messages_total",
      "microdcs_handler_seconds_bucket",
      "microdcs_poller_processed_total",
      "microdcs_engine_inbox_full_total",
      "microdcs_nodejs_eventloop_lag_p99_seconds",
      "microdcs_stream_lag",
      "microdcs_dead_letters",
      "microdcs_publisher_active",
      "microdcs_publisher_activations_total",
      "microdcs_journal_total",
      "microdcs_execution_log_dropped_total",
      "microdcs_execution_log_committed_total"
    ]
    expect(wanted.filter((name) => !named.has(name))).toEqual([])
  })

  it("draws per-scope job rates and run-time percentiles from the job counters and histogram, max over instances", () => {
    const exprs = graphs.flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ""))
    for (const event of ["started", "completed", "aborted"]) {
      expect(exprs.some((e) => e.includes("microdcs_jobs_total") && e.includes(`event="${event}"`) && e.startsWith("max by (scope)")), event).toBe(true)
    }
    for (const q of ["0.5", "0.95", "0.99"]) {
      expect(exprs.some((e) => e.startsWith(`histogram_quantile(${q}, max by (scope, le)`) && e.includes("microdcs_job_run_seconds_bucket")), q).toBe(true)
    }
  })

  it("names only metrics a running daemon exports", { timeout: 60_000 }, async () => {
    const text = (await island.get("/metrics")).text
    const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]))
    const exported = (name: string) => {
      if (types.has(name)) return true
      const series = /^(.*)_(bucket|sum|count)$/.exec(name)
      return series !== null && ["histogram", "summary"].includes(types.get(series[1]!) ?? "")
    }
    expect([...named].filter((name) => !exported(name))).toEqual([])
  })
})
