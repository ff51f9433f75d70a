import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { ConfigProvider, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemonConfig, describeConfigError } from "../src/DaemonConfig.js"
import { prometheusHistory } from "../src/PrometheusHistory.js"
import { daemonEnv, spawnDaemon } from "./DaemonProcess.js"

/**
 * The history from a Prometheus server (`HISTORY_PROMETHEUS_URL`). No Prometheus is installed
 * here: a small real HTTP server answers `query_range` in Prometheus's JSON, and the test checks
 * the queries the daemon sends and the points it makes of the answers, in process and through a
 * running daemon's route. The settings are checked
 * with the rest of the daemon's configuration, every problem listed.
 */

let server: Server
let base: string
const asked: Array<URLSearchParams> = []
let failing = false

/** Each evaluation time of the range with a value picked by what the query asks for; NaN for p99 (no runs). */
const answerTo = (q: URLSearchParams) => {
  const query = q.get("query")!
  const value = query.includes('event="started"') ? "2" : query.includes('event="completed"') ? "1.5" : query.includes('event="aborted"') ? "0" : query.includes("histogram_quantile(0.99") ? "NaN" : "180.4"
  const start = Number(q.get("start"))
  const end = Number(q.get("end"))
  const step = Number.parseInt(q.get("step")!, 10)
  const values: Array<[number, string]> = []
  for (let t = start; t <= end; t += step) values.push([t, value])
  return { status: "success", data: { resultType: "matrix", result: [{ metric: {}, values }] } }
}

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url!, "http://x")
    asked.push(url.searchParams)
    response.setHeader("content-type", "application/json")
    if (failing || url.pathname !== "/prom/api/v1/query_range") {
      response.statusCode = 400
      response.end(JSON.stringify({ status: "error", errorType: "bad_data", error: "parse error" }))
      return
    }
    response.end(JSON.stringify(answerTo(url.searchParams)))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/prom`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

describe("the history from Prometheus", () => {
  it("asks query_range for the rates and percentiles of the scope over the window, max over instances, with the configured matchers", async () => {
    const source = prometheusHistory(base, 'job="island-a"')
    const answer = await Effect.runPromise(source.points({ scope: 'line"1', windowMs: 3_600_000, stepMs: 300_000 }))
    expect(answer.source).toBe("prometheus")
    expect(answer.points).toHaveLength(12)
    expect(answer.points[0]).toEqual({ at: answer.from, started: 2, completed: 1.5, aborted: 0, p50: 180, p95: 180, p99: null })
    expect(asked).toHaveLength(6)
    for (const q of asked) {
      expect(q.get("step")).toBe("300s")
      expect(Number(q.get("end")) * 1000).toBe(answer.to)
      expect(Number(q.get("start")) * 1000).toBe(answer.from + 300_000)
      expect(q.get("query")).toContain('scope="line\\"1"')
      expect(q.get("query")).toContain('job="island-a"')
    }
    const queries = asked.map((q) => q.get("query")!)
    expect(queries).toContain('sum(max by (scope) (increase(microdcs_jobs_total{event="started",scope="line\\"1",job="island-a"}[300s]))) / 5')
    expect(queries).toContain('histogram_quantile(0.95, sum by (le) (max by (scope, le) (increase(microdcs_job_run_seconds_bucket{scope="line\\"1",job="island-a"}[300s])))) * 1000')
  })

  it("fails as HistoryUnavailable with Prometheus's error when it refuses", async () => {
    failing = true
    const result = await Effect.runPromise(Effect.result(prometheusHistory(base, undefined).points({ scope: undefined, windowMs: 3_600_000, stepMs: 60_000 })))
    failing = false
    expect(result._tag).toBe("Failure")
    expect(result._tag === "Failure" && result.failure).toMatchObject({ _tag: "HistoryUnavailable", message: "Prometheus query_range failed: parse error" })
  })
})

describe("a daemon with HISTORY_PROMETHEUS_URL", () => {
  let broker: MosquittoServer
  beforeAll(async () => {
    broker = await startMosquitto()
  })
  afterAll(async () => {
    await broker?.stop()
  })

  it("answers the console's history from Prometheus, and 503 with Prometheus's error when it refuses", async () => {
    const extra = { HISTORY_PROMETHEUS_URL: base, HISTORY_PROMETHEUS_MATCHERS: 'job="island-b"' }
    const island = await spawnDaemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix: randomPrefix("history-prom"), instanceId: "history-prom", extra }))
    try {
      await island.waitReady()
      asked.length = 0
      const reply = await island.get("/api/console/history?scope=line-1&window=6h&step=15m")
      expect(reply.status, reply.text).toBe(200)
      const body = reply.json() as { source: string; points: ReadonlyArray<{ started: number; p50: number | null; p99: number | null }> }
      expect(body.source).toBe("prometheus")
      expect(body.points).toHaveLength(24)
      expect(body.points.every((p) => p.started === 2 && p.p50 === 180 && p.p99 === null)).toBe(true)
      expect(asked.map((q) => q.get("query")!).every((q) => q.includes('scope="line-1",job="island-b"'))).toBe(true)
      failing = true
      const refused = await island.get("/api/console/history")
      failing = false
      expect(refused.status).toBe(503)
      expect(refused.json()).toEqual({ error: "history-unavailable", message: "Prometheus query_range failed: parse error" })
    } finally {
      failing = false
      await island.stop("SIGTERM")
    }
  }, 60_000)
})

describe("the history settings", () => {
  const env = { VALKEY_URL: "redis://127.0.0.1:1", MQTT_URL: "mqtt://127.0.0.1:1" }
  const parse = (extra: Record<string, string>) => Effect.runPromise(Effect.result(daemonConfig.parse(ConfigProvider.fromEnvRecord({ ...env, ...extra }))))

  it("takes a Prometheus base address and matchers; unset, the daemon's own history", async () => {
    const set = await parse({ HISTORY_PROMETHEUS_URL: "https://prometheus:9090/", HISTORY_PROMETHEUS_MATCHERS: 'job="island-a", env=~"prod|test"' })
    expect(set._tag === "Success" && set.success.history).toEqual({ prometheusUrl: "https://prometheus:9090/", prometheusMatchers: 'job="island-a", env=~"prod|test"' })
    const unset = await parse({})
    expect(unset._tag === "Success" && unset.success.history).toEqual({ prometheusUrl: undefined, prometheusMatchers: undefined })
  })

  it("lists every problem of the two settings with the others'", async () => {
    for (const [url, problem] of [
      ["ftp://prometheus", "must use http or https"],
      ["http://user:pw@prometheus", "must not carry a user or password"],
      ["http://prometheus?x=1", "without query or fragment"],
      ["not an address", "absolute http:// or https:// address"]
    ] as const) {
      const result = await parse({ HISTORY_PROMETHEUS_URL: url, HISTORY_PROMETHEUS_MATCHERS: "job=island", HTTP_PORT: "abc" })
      expect(result._tag).toBe("Failure")
      const text = result._tag === "Failure" ? describeConfigError(result.failure) : ""
      expect(text).toContain("HISTORY_PROMETHEUS_URL:")
      expect(text).toContain(problem)
      expect(text).toContain("HISTORY_PROMETHEUS_MATCHERS:")
      expect(text).toContain("HTTP_PORT:")
    }
  })
})
