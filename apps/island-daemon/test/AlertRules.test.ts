import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { inject } from "vitest"
import { parse } from "yaml"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"

/**
 * The Prometheus alerting rules shipped in `deploy/prometheus`: well formed, and every metric
 * they name is one a running daemon exports (a renamed metric would silence an alert for good).
 * `promtool check rules` runs too where promtool is installed.
 */

const rulesFile = new URL("../../../deploy/prometheus/microdcs-island-rules.yml", import.meta.url)

interface Rule {
  readonly alert?: unknown
  readonly expr?: unknown
  readonly labels?: { readonly severity?: unknown }
  readonly annotations?: { readonly summary?: unknown; readonly description?: unknown }
}
const groups = (parse(readFileSync(rulesFile, "utf8")) as { groups: ReadonlyArray<{ name: string; rules: ReadonlyArray<Rule> }> }).groups
const rules = groups.flatMap((group) => group.rules)

let broker: MosquittoServer
let island: DaemonProcess
beforeAll(async () => {
  broker = await startMosquitto()
  island = await spawnDaemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix: randomPrefix("alerts"), instanceId: "alerts-1" }))
  await island.waitReady()
}, 60_000)
afterAll(async () => {
  await island?.stop()
  await broker?.stop()
})

describe("the alerting rules (deploy/prometheus)", () => {
  it("alert on readiness, stream lag, dead letters, publisher lease changes and dropped log writes, each with a severity and what to do", () => {
    expect(rules.map((r) => r.alert)).toEqual([
      "MicrodcsIslandNotReady",
      "MicrodcsStreamLag",
      "MicrodcsDeadLetters",
      "MicrodcsPublisherLeaseChanges",
      "MicrodcsExecutionLogDropped"
    ])
    for (const rule of rules) {
      expect(typeof rule.expr, String(rule.alert)).toBe("string")
      expect(["critical", "warning"]).toContain(rule.labels?.severity)
      expect(typeof rule.annotations?.summary).toBe("string")
      expect(typeof rule.annotations?.description).toBe("string")
    }
  })

  it("name only metrics a running daemon exports; its readiness checks are there, all passing", async () => {
    const text = (await island.get("/metrics")).text
    const exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]))
    const named = new Set(rules.flatMap((r) => [...String(r.expr).matchAll(/\bmicrodcs_[a-z_]+/g)].map((m) => m[0])))
    expect([...named].filter((name) => !exported.has(name))).toEqual([])
    const checks = [...text.matchAll(/^microdcs_ready\{check="([^"]+)"\} (\d)$/gm)].map((m) => [m[1], m[2]])
    expect(checks.length).toBeGreaterThan(2)
    expect(checks.filter(([, value]) => value !== "1")).toEqual([])
  })

  it("pass promtool's check where promtool is installed", async () => {
    const promtool = await promisify(execFile)("sh", ["-c", "command -v promtool || true"]).then((r) => r.stdout.trim())
    if (promtool === "") return
    await promisify(execFile)(promtool, ["check", "rules", rulesFile.pathname])
  })
})
