import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { inject } from "vitest"
import { type DeployedPackage, deployPackage, type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemonEnv, type DaemonProcess, spawnDaemon, until } from "./DaemonProcess.js"
import { healthCheckCommand } from "./Dockerfile.js"

/**
 * The daemon as `npm install @microdcs/island-daemon` gives it: built, then deployed into a
 * temporary folder that holds only what the package publishes and its production dependencies
 * (`pnpm deploy --prod --offline`, from the local store). Its `bin` starts there by its shebang, on
 * the test Valkey and Mosquitto with every role (the embedded PostgreSQL, its WebAssembly loaded
 * from the installed PGlite), serves the console's shipped files, and stops on SIGTERM with exit 0.
 */

const ROOT = fileURLToPath(new URL("../../../", import.meta.url))

let deployed: DeployedPackage
let broker: MosquittoServer
let island: DaemonProcess
beforeAll(async () => {
  ;[deployed, broker] = await Promise.all([deployPackage(ROOT, "@microdcs/island-daemon"), startMosquitto()])
  const env = daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix: randomPrefix("installed"), instanceId: "installed-1" })
  const { ISLAND_ROLES: _all, ...everyRole } = env
  const launch = { command: join(deployed.dir, "dist", "island-daemon.mjs"), args: [], cwd: deployed.dir }
  island = await spawnDaemon({ ...everyRole, PG_DATA_DIR: "memory://" }, 120_000, launch)
}, 600_000)
afterAll(async () => {
  await island?.stop("SIGKILL")
  await broker?.stop()
  deployed?.remove()
})

/** The storage role once its embedded PostgreSQL answers (while it starts, /readyz says so in its detail). */
const storageUp = async () => {
  const reply = await island.get("/readyz")
  const storage = (reply.json() as { roles?: { storage?: { ok?: boolean; detail?: string } } }).roles?.storage
  return reply.status === 200 && storage?.ok === true && storage.detail === undefined ? storage : undefined
}

describe("the installed daemon (pnpm deploy of the package)", () => {
  it("holds only the bundle, the console's files and the package's own files, no workspace package", () => {
    expect(deployed.files).toEqual([
      "README.md",
      "console-dist/app.css",
      "console-dist/app.js",
      "dist/EmbeddedPostgresWorker.js",
      "dist/EmbeddedPostgresWorker.js.map",
      "dist/island-daemon.mjs",
      "dist/island-daemon.mjs.map",
      "package.json"
    ])
    const manifest = JSON.parse(readFileSync(join(deployed.dir, "package.json"), "utf8")) as { dependencies: Record<string, string> }
    expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith("@microdcs/"))).toEqual([])
  })

  it("starts by its shebang with --no-memory-protection-keys, is ready with the embedded PostgreSQL, serves the console", async () => {
    // env -S replaces itself with node: the daemon's own command line carries the option (Linux shows it in /proc).
    if (process.platform === "linux") expect(readFileSync(`/proc/${island.child.pid}/cmdline`, "utf8").split("\0")).toContain("--no-memory-protection-keys")
    await island.waitReady(120_000)
    await until("the embedded PostgreSQL up", storageUp, 180_000)
    const [page, script, metrics] = await Promise.all([island.get("/console"), island.get("/console/app.js"), island.get("/metrics")])
    expect([page.status, script.status, metrics.status]).toEqual([200, 200, 200])
    expect(script.headers.get("content-type")).toMatch(/javascript/)
    expect(metrics.text).toMatch(/^microdcs_ready\{check="roles"\} 1$/m)
  }, 400_000)

  it("passes the container image's health check (the Dockerfile's HEALTHCHECK command)", async () => {
    const [command = "", ...args] = healthCheckCommand()
    const env = { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HTTP_PORT: String(island.port) }
    await expect(promisify(execFile)(command, args, { env, timeout: 60_000 })).resolves.toBeDefined()
  }, 90_000)

  it("stops on SIGTERM with exit 0", async () => {
    const exit = await island.stop("SIGTERM", 120_000)
    expect({ code: exit.code, signal: exit.signal }, island.stderr()).toEqual({ code: 0, signal: null })
  }, 150_000)
})
