import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { inject } from "vitest"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"

/**
 * The integrator's protocol guide, run as written: every `sh` block of
 * `docs/integrator/protocol.md`, in order, in one shell, against a fresh island, and every
 * output line compared with the `# → ` line the guide shows for it (`…` stands for anything).
 */

const guide = readFileSync(new URL("../../../docs/integrator/protocol.md", import.meta.url), "utf8")
const blocks = [...guide.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? "")
const expected = blocks.flatMap((block) => block.split("\n").flatMap((line) => (line.startsWith("# → ") ? [line.slice(4)] : [])))
const pattern = (line: string) => new RegExp(`^${line.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`)

let broker: MosquittoServer
let island: DaemonProcess
const prefix = randomPrefix("guide")

beforeAll(async () => {
  broker = await startMosquitto()
  island = await spawnDaemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "guide-1" }))
  await island.waitReady()
}, 60_000)
afterAll(async () => {
  await island?.stop()
  await broker?.stop()
})

describe("the protocol guide (docs/integrator/protocol.md)", () => {
  it("shows a reply for every request and a state for every read", () => {
    expect(blocks.length).toBeGreaterThan(5)
    const requests = blocks.join("\n").match(/^(request |mosquitto_rr |mosquitto_sub )/gm) ?? []
    expect(expected.length).toBe(requests.length)
  })

  it("drives a job to Ended_Completed and every method as shown, with the command line clients alone", async () => {
    const script = ["set -euo pipefail", ...blocks].join("\n")
    const url = new URL(broker.url)
    const env = { PATH: process.env["PATH"] ?? "/usr/bin:/bin", H: url.hostname, P: url.port, PREFIX: prefix, SCOPE: "line-1" }
    const { stdout } = await promisify(execFile)("bash", ["-c", script], { env, timeout: 90_000 })
    const lines = stdout.split("\n").filter((line) => line.length > 0)
    expect(lines.length, stdout).toBe(expected.length)
    lines.forEach((line, i) => expect(line, `line ${i + 1}`).toMatch(pattern(expected[i]!)))
  }, 120_000)
})
