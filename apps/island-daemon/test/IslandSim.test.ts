import { spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import { inject } from "vitest"
import { configEventType } from "@microdcs/cloudevents-mqtt"
import {
  type ConfigRequest,
  decodeStationScript,
  type JobOrderInput,
  makeStation,
  type MesInput,
  type ReceivedCommand,
  runMes,
  type StationScript
} from "@microdcs/island-sim"
import { storeLayer } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemonEnv, type DaemonProcess, spawnDaemon, until } from "./DaemonProcess.js"
import { axleJobOrder, fixture, jobOrderOf } from "./IslandKit.js"

/**
 * The island-sim sandbox against a running daemon: its station and its MES talk to the island
 * over the broker alone (neither has a Valkey client; the test reads the store only to check).
 */

let broker: MosquittoServer
let daemon: DaemonProcess | undefined
const prefix = randomPrefix("sim")
const store = Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))
const ROOT = fileURLToPath(new URL("../../../", import.meta.url))
const PACKAGE = join(ROOT, "packages/island-sim")

const QA = "com.example.station.qa.v1"
const TORQUE = "com.example.station.torque.v1"

/** The axle station: every job's first torque check is NOK, so every job takes the rework loop once. */
const axleScript = {
  scopes: ["line-1"],
  resend: { everyMs: 50, forMs: 60_000 },
  commands: [
    { type: "com.example.station.position.v1", reply: { done: "{{action}}" }, delayMs: [1, 5], emit: [{ type: QA, afterMs: 5 }] },
    { type: "com.example.station.tighten.v1", reply: { done: "{{action}}" }, delayMs: [1, 5], emit: [{ type: TORQUE, afterMs: 5 }] }
  ],
  events: {
    [QA]: { data: { passed: true } },
    [TORQUE]: { data: { torque_ok: true, torque_nm: 85 }, sequence: [{ torque_ok: false, torque_nm: 78 }] }
  }
}
const script: StationScript = Result.getOrThrow(decodeStationScript(axleScript))

/** The station configuration of a scope and the axle work master (`change` edits it). */
const configRequests = (change: (wm: Record<string, unknown>) => Record<string, unknown> = (wm) => wm): ReadonlyArray<ConfigRequest> => [
  { origin: "equipment", type: configEventType("equipment"), data: { ID: "station-7" }, extensions: {} },
  { origin: "materialclass", type: configEventType("materialclass"), data: { MaterialClassID: "axle" }, extensions: {} },
  { origin: "materialdefinition", type: configEventType("materialdefinition"), data: { MaterialDefinitionID: "axle-front-a2" }, extensions: {} },
  { origin: "personnel", type: configEventType("personnel"), data: { ID: "operator-12" }, extensions: {} },
  { origin: "physicalasset", type: configEventType("physicalasset"), data: { ID: "nutrunner-3" }, extensions: {} },
  { origin: "workmaster", type: configEventType("workmaster"), data: change(fixture("work-master-axle.json")), extensions: {} }
]

const orders = (...ids: ReadonlyArray<string>): ReadonlyArray<JobOrderInput> => ids.map((id) => ({ origin: id, id, jobOrder: axleJobOrder(id) }))

const mes = (scope: string, input: MesInput) => runMes({ mqtt: { url: broker.url }, topics: { prefix }, scope, input, timeoutMs: 60_000 })

/** Runs the island-sim command from source; resolves with its exit code and output. */
const islandSim = (args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, ["--import", "tsx/esm", "--conditions=source", "src/cli/main.ts", ...args], {
    cwd: PACKAGE,
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", MQTT_URL: broker.url, MQTT_TOPIC_PREFIX: prefix },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}

beforeAll(async () => {
  broker = await startMosquitto()
  daemon = await spawnDaemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "sim-1" }))
  await daemon.waitReady()
}, 60_000)

afterAll(async () => {
  await daemon?.stop("SIGTERM")
  await broker?.stop()
})

describe("island-sim against a running island", () => {
  it.live(
    "its station drives the axle recipe, rework loop included, to Ended_Completed over MQTT alone",
    () =>
      Effect.gen(function* () {
        const commands: Array<ReceivedCommand> = []
        yield* makeStation({ mqtt: { url: broker.url }, topics: { prefix }, script, onCommand: (command) => void commands.push(command) })
        const ids = ["jo-sim-a1", "jo-sim-a2", "jo-sim-a3"]
        const report = yield* mes("line-1", { config: configRequests(), orders: orders(...ids) })
        expect(report, JSON.stringify(report.notCompleted)).toMatchObject({ submitted: 3, completed: 3, failed: 0, pending: 0 })
        expect(report.latencyMs?.p99).toBeGreaterThan(0)
        // Every job's first torque check failed: each took the rework loop once.
        for (const id of ids) {
          expect(commands.filter((c) => c.jobId === id).map((c) => c.action).sort()).toEqual(["position", "retighten", "tighten"])
          expect((yield* jobOrderOf(id).pipe(Effect.provide(store)))?.state).toBe("Ended_Completed")
        }
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "a station of scope line-1 does not answer a command of scope line-2: that job's action times out",
    () =>
      Effect.gen(function* () {
        const commands: Array<ReceivedCommand> = []
        yield* makeStation({ mqtt: { url: broker.url }, topics: { prefix }, script, onCommand: (command) => void commands.push(command) })
        // Work master ids are the island's, not a scope's: this one has its own, and its push commands a 1 s
        // timeout (three sends, then the job fails); its pull events keep theirs, so only an unanswered command ends it.
        const quick = (wm: Record<string, unknown>) => {
          const data = wm["data"] as { Actions: ReadonlyArray<Record<string, unknown>> }
          const actions = data.Actions.map((a) => (a["Interaction"] === "push_command" ? { ...a, TimeoutSeconds: 1 } : a))
          return { ...wm, ID: "wm-axle-quick", data: { ...data, Actions: actions } }
        }
        const order = { ...axleJobOrder("jo-sim-b1"), WorkMasterID: [{ ID: "wm-axle-quick" }] }
        const report = yield* mes("line-2", { config: configRequests(quick), orders: [{ origin: "b1", id: "jo-sim-b1", jobOrder: order }] })
        expect(report).toMatchObject({ submitted: 1, completed: 0, failed: 1, pending: 0 })
        expect(report.notCompleted).toEqual([{ id: "jo-sim-b1", outcome: "failed", detail: "ended Aborted" }])
        expect(commands).toEqual([])
      }).pipe(Effect.scoped),
    60_000
  )

  it(
    "the commands: a station from a script file, and an MES that reports its batch (exit 0) or the jobs that did not complete (exit 1)",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "island-sim-"))
      const file = (name: string, content: unknown) => {
        writeFileSync(join(dir, name), JSON.stringify(content))
        return join(dir, name)
      }
      const config = file("config.json", [
        { type: "equipment", data: { ID: "station-7" } },
        { type: "workmaster", file: fileURLToPath(new URL("../fixtures/work-master-axle.json", import.meta.url)) }
      ])
      const station = islandSim(["station", "--script", file("station.json", axleScript)])
      try {
        // Subscribed before the first command can come: it says so once its subscriptions stand.
        await until("the station is up", () => (station.stderr().includes("station up") ? true : undefined))
        const batch = islandSim(["mes", "--config", config, "--orders", file("order.json", axleJobOrder("jo-sim-c")), "--count", "2", "--json"])
        expect(await batch.exited, batch.stderr()).toBe(0)
        const report = JSON.parse(batch.stdout()) as Record<string, unknown>
        expect(report).toMatchObject({ scope: "line-1", submitted: 2, completed: 2, failed: 0, pending: 0, notCompleted: [] })
        expect(batch.stderr()).toContain("MES: submitting 2 job orders with StoreAndStart")

        const missing = { ...axleJobOrder("jo-sim-d"), WorkMasterID: [{ ID: "wm-missing" }] }
        const refused = islandSim(["mes", "--orders", file("missing.json", missing)])
        expect(await refused.exited, refused.stderr()).toBe(1)
        expect(refused.stdout()).toMatch(/submitted\s+1\n\s*completed\s+0\n\s*failed\s+1/)
        expect(refused.stdout()).toContain("jo-sim-d  refused:")
      } finally {
        station.child.kill("SIGINT")
        expect(await station.exited).toBe(0)
        expect(station.stderr()).toMatch(/station stopped: [1-9]\d* commands/)
      }
    },
    60_000
  )
})
